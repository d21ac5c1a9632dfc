// `gen_ai.response.id`: the API's id for each response reaches its `chat` span (through the
// official SDKs, with recorded responses), and goes no further: the run's record keeps none.
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, AgentRuntime, memoryBackend, tool } from "../../../src/index.js";
import { fakeAnthropic, fakeOpenAI, fixture, sseOf } from "../../support/sdk-fixtures.js";
import { useTracing } from "../../support/tracing.js";

const tracing = useTracing();
const silent = pino({ level: "silent" });

const getWeather = tool({
  name: "get_weather",
  description: "Current weather for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => `${city}: sunny`,
});

// The answer after the tool results, as the Messages API streams it.
const FINAL_ID = "msg_01XFDUDYJgAACzvnptvVoYEL";
const finalMessage = sseOf([
  {
    type: "message_start",
    message: {
      id: FINAL_ID,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 210,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 1850,
        output_tokens: 1,
      },
    },
  },
  {
    type: "content_block_start",
    index: 0,
    content_block: { type: "text", text: "", citations: null },
  },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Sunny." } },
  { type: "content_block_stop", index: 0 },
  {
    type: "message_delta",
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: 6 },
  },
  { type: "message_stop" },
]);

const getTime = tool({
  name: "get_time",
  description: "Local time in a city.",
  input: z.object({ city: z.string() }),
  handler: async () => "12:00",
});

async function runDurably(agent: Agent, input: string) {
  runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger: silent });
  await runtime.start();
  const handle = await runtime.submit(agent.config.name, input);
  expect(await handle.result()).toMatchObject({ status: "completed", error: null });
  return { runtime, handle };
}

const chatSpans = () => tracing.spans().filter((span) => span.name.startsWith("chat"));

let runtime: AgentRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("gen_ai.response.id", () => {
  it("is each streamed Anthropic message's id on its chat span, and stays out of the run's record", async () => {
    const { provider } = fakeAnthropic([
      { sse: fixture("anthropic-stream-tool-use.sse") },
      { sse: finalMessage },
    ]);
    const agent = new Agent({
      provider,
      tools: [getWeather],
      config: { name: "weather" },
      logger: silent,
    });
    const { runtime, handle } = await runDurably(agent, "Weather in Lisbon?");

    expect(chatSpans().map((span) => span.attributes["gen_ai.response.id"])).toEqual([
      "msg_014p7gG3wDgGV9EUtLvnow3U",
      FINAL_ID,
    ]);
    const stored = JSON.stringify([await handle.record(), await runtime.get(handle.runId)]);
    expect(stored).toContain("Sunny.");
    expect(stored).not.toContain("msg_014p7gG3wDgGV9EUtLvnow3U");
    expect(stored).not.toContain(FINAL_ID);
  });

  it("is an OpenAI chat completion's id, and absent when a compatible server sends none", async () => {
    const streamedCompletion = fixture("openai-chat-stream-tool-calls.sse");
    const completionId = /"id":"(chatcmpl-[^"]+)"/.exec(streamedCompletion)?.[1];
    expect(completionId).toMatch(/^chatcmpl-/);
    // A compatible server that leaves `id` out of its chunks.
    const anonymous = [
      { choices: [{ index: 0, delta: { role: "assistant", content: "Done." } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
      { choices: [], usage: { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 } },
    ]
      .map((chunk) => ({ object: "chat.completion.chunk", created: 1, model: "qwen3", ...chunk }))
      .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
      .join("")
      .concat("data: [DONE]\n\n");
    const { provider } = fakeOpenAI([{ sse: streamedCompletion }, { sse: anonymous }], {
      api: "chat",
    });
    const agent = new Agent({
      provider,
      tools: [getWeather, getTime],
      config: { name: "weather" },
      logger: silent,
    });
    await runDurably(agent, "Weather and time in Lisbon?");

    expect(chatSpans().map((span) => span.attributes["gen_ai.response.id"])).toEqual([
      completionId,
      undefined,
    ]);
  });
});
