// Real models: `openaiProvider` runs an agent on OpenAI's official SDK (the Responses API; pass
// `api: "chat"` for Chat Completions). With OPENAI_API_KEY set this calls OpenAI. Without it,
// the SDK talks to a FakeFetch that serves recorded replies, so the example runs anywhere.
import OpenAI from "openai";
import { z } from "zod";
import { Agent, openaiProvider, ProviderError, tool } from "../src/index.js";
import { FakeFetch } from "../src/testing.js";

const weather = tool({
  name: "get_weather",
  description: "Current weather for a city (a fixture).",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => `${city}: sunny, 21 °C`,
});

// What the Responses API answers: first a function call, then the final text.
const reply = (output: unknown[], usage: { input: number; cached: number; output: number }) => ({
  id: "resp_example",
  object: "response",
  created_at: 1756315700,
  status: "completed",
  error: null,
  incomplete_details: null,
  model: "gpt-5-mini-2025-08-07",
  output,
  usage: {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cached },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output,
  },
});
const fake = new FakeFetch([
  {
    json: reply(
      [
        {
          type: "function_call",
          id: "fc_1",
          call_id: "call_1",
          name: "get_weather",
          arguments: '{"city":"Lisbon"}',
          status: "completed",
        },
      ],
      { input: 320, cached: 0, output: 18 },
    ),
  },
  {
    json: reply(
      [
        {
          type: "message",
          id: "msg_1",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Lisbon is sunny, 21 °C.", annotations: [] }],
        },
      ],
      { input: 360, cached: 256, output: 9 },
    ),
  },
  {
    status: 429,
    headers: { "retry-after": "2" },
    json: {
      error: {
        message: "Rate limit reached.",
        type: "requests",
        param: null,
        code: "rate_limit_exceeded",
      },
    },
  },
]);

const live = Boolean(process.env.OPENAI_API_KEY);
const provider = live
  ? openaiProvider({ model: "gpt-5-mini" })
  : openaiProvider({
      model: "gpt-5-mini",
      client: new OpenAI({ apiKey: "sk-offline-example", fetch: fake.fetch, maxRetries: 0 }),
    });

const agent = new Agent({
  provider,
  tools: [weather],
  config: { systemPrompt: "Answer weather questions with the get_weather tool. Be brief." },
});
const result = await agent.run("What is the weather in Lisbon?");
console.log(`mode: ${live ? "live (OpenAI)" : "recorded replies (no network)"}`);
console.log(`status: ${result.status}, output: ${JSON.stringify(result.output)}`);
console.log(`usage: ${JSON.stringify(result.usage)}`);

if (!live) {
  // The second request carried the tool call and its result back, as Responses API items.
  const second = fake.requests[1]?.body as { input: Array<{ type?: string; output?: string }> };
  const sentBack = second.input.find((item) => item.type === "function_call_output");
  console.log(`tool result sent back: ${JSON.stringify(sentBack?.output)}`);

  // A failed call is a ProviderError with a code (here the recorded 429), what a retry can do,
  // and how long the API asked to wait; a run it fails ends "failed" with the error.
  try {
    await provider.complete({
      system: "",
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      tools: [],
      model: "default",
      maxTokens: 64,
      temperature: 1,
      stream: false,
      prefixKey: null,
    });
  } catch (thrown) {
    if (thrown instanceof ProviderError) {
      console.log(
        `${thrown.name}: code ${thrown.code}, retryable ${thrown.retryable}, retryAfterMs ${thrown.retryAfterMs}`,
      );
    }
  }
}
