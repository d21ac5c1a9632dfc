// Real models: `anthropicProvider` runs an agent on Anthropic's official SDK (the Messages API).
// With prompt caching on (the default), the tools and the system prompt carry cache breakpoints.
// With ANTHROPIC_API_KEY set this calls Anthropic. Without it, the SDK talks to a FakeFetch that
// serves recorded replies (a streamed tool call, then the answer), so it runs anywhere.
import Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { Agent, anthropicProvider, tool } from "../src/index.js";
import { FakeFetch } from "../src/testing.js";

const weather = tool({
  name: "get_weather",
  description: "Current weather for a city (a fixture).",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => `${city}: sunny, 21 °C`,
});

// A server-sent-events body as the Messages API streams it.
const sse = (events: ReadonlyArray<{ type: string; [field: string]: unknown }>) =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
const usage = (input: number, read: number, write: number, output: number) => ({
  input_tokens: input,
  cache_read_input_tokens: read,
  cache_creation_input_tokens: write,
  output_tokens: output,
});
const start = (id: string, tokens: ReturnType<typeof usage>) => ({
  type: "message_start",
  message: {
    id,
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: tokens,
  },
});
const fake = new FakeFetch([
  {
    sse: sse([
      start("msg_1", usage(40, 0, 1200, 1)),
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me " } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "check." } },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} },
      },
      {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: '{"ci' },
      },
      {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: 'ty":"Lisbon"}' },
      },
      { type: "content_block_stop", index: 1 },
      {
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { output_tokens: 30 },
      },
      { type: "message_stop" },
    ]),
  },
  {
    sse: sse([
      start("msg_2", usage(25, 1200, 0, 1)),
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: "Lisbon is sunny, 21 °C." },
      },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 9 },
      },
      { type: "message_stop" },
    ]),
  },
]);

const live = Boolean(process.env.ANTHROPIC_API_KEY);
const provider = live
  ? anthropicProvider({ model: "claude-sonnet-4-5" })
  : anthropicProvider({
      model: "claude-sonnet-4-5",
      client: new Anthropic({ apiKey: "sk-ant-offline-example", fetch: fake.fetch, maxRetries: 0 }),
    });

const agent = new Agent({
  provider,
  tools: [weather],
  config: { systemPrompt: "Answer weather questions with the get_weather tool. Be brief." },
});
console.log(`mode: ${live ? "live (Anthropic)" : "recorded replies (no network)"}`);
for await (const event of agent.runStream("What is the weather in Lisbon?")) {
  if (event.type === "text_delta") console.log(`text_delta ${JSON.stringify(event.text)}`);
  else if (event.type === "tool_start") {
    console.log(`tool_start ${event.toolCall.name} ${JSON.stringify(event.toolCall.input)}`);
  } else if (event.type === "result") {
    console.log(`status: ${event.result.status}, output: ${JSON.stringify(event.result.output)}`);
    console.log(`usage: ${JSON.stringify(event.result.usage)}`);
  }
}

if (!live) {
  const first = fake.requests[0]?.body as {
    system: unknown;
    tools: Array<{ cache_control?: unknown }>;
  };
  console.log(`system sent as: ${JSON.stringify(first.system)}`);
  console.log(`last tool's cache_control: ${JSON.stringify(first.tools.at(-1)?.cache_control)}`);
}
