import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, tool } from "../../../src/index.js";
import { collect } from "../../support/collect.js";
import {
  fakeAnthropic,
  fakeOpenAI,
  fixture,
  jsonFixture,
  messageItem,
  responsesReply,
  sseOf,
} from "../../support/sdk-fixtures.js";

const getWeather = tool({
  name: "get_weather",
  description: "Current weather for a city.",
  input: z.object({ city: z.string(), unit: z.string().optional() }),
  handler: async ({ city }) => `${city}: sunny, 21°C`,
});

const openaiFinal = responsesReply([messageItem("Lisbon is sunny.")], {
  input: 1300,
  cached: 1200,
  output: 6,
});

const anthropicFinal = {
  id: "msg_final",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [{ type: "text", text: "Lisbon is sunny.", citations: null }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: {
    input_tokens: 30,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 1600,
    output_tokens: 6,
  },
};

describe("an Agent on a real provider adapter (SDK over a fake fetch)", () => {
  it("OpenAI: streams a tool call, runs the tool, sends its result back and completes", async () => {
    const { fake, provider } = fakeOpenAI([
      { sse: fixture("openai-responses-stream-tool-call.sse") },
      {
        sse: sseOf([
          {
            type: "response.output_text.delta",
            output_index: 0,
            item_id: "msg_final",
            content_index: 0,
            delta: "Lisbon is sunny.",
          },
          { type: "response.output_item.done", output_index: 0, item: openaiFinal.output[0] },
          { type: "response.completed", response: openaiFinal },
        ]),
      },
    ]);
    const agent = new Agent({
      provider,
      tools: [getWeather],
      config: { systemPrompt: "Be brief." },
    });
    const events = await collect(agent.runStream("Weather in Lisbon?"));
    const result = events.at(-1);
    expect(result?.type === "result" ? result.result : undefined).toMatchObject({
      status: "completed",
      output: "Lisbon is sunny.",
      usage: {
        inputTokens: 176 + 100,
        outputTokens: 64,
        cacheReadTokens: 2224,
        cacheWriteTokens: 0,
      },
    });
    expect(
      events.filter((event) => event.type === "text_delta").map((event) => event.text),
    ).toEqual(["Let me", " check.", "Lisbon is sunny."]);
    const [first, second] = fake.requests.map(
      (sent) => sent.body as { model: string; input: unknown[]; prompt_cache_key: string },
    );
    expect(second?.model).toBe("gpt-5-mini");
    expect(second?.input.slice(-2)).toStrictEqual([
      {
        type: "function_call",
        call_id: "call_Xk3Yq2",
        name: "get_weather",
        arguments: '{"city":"Lisbon","unit":"celsius"}',
      },
      { type: "function_call_output", call_id: "call_Xk3Yq2", output: "Lisbon: sunny, 21°C" },
    ]);
    // Both iterations share the prompt-cache key (same system prompt and tools).
    expect(second?.prompt_cache_key).toMatch(/^[0-9a-f]{32}$/);
    expect(second?.prompt_cache_key).toBe(first?.prompt_cache_key);
    fake.assertComplete();
  });

  it("Anthropic: runs two tool calls and sends the tool_results back in one user turn", async () => {
    const { fake, provider } = fakeAnthropic([
      { json: jsonFixture("anthropic-message-tool-use.json") },
      { json: anthropicFinal },
    ]);
    const agent = new Agent({
      provider,
      tools: [getWeather],
      config: { systemPrompt: "Be brief.", model: "claude-haiku-4-5" },
    });
    const result = await agent.run("Weather in Lisbon?");
    expect(result).toMatchObject({ status: "completed", output: "Lisbon is sunny." });
    const second = fake.requests[1]?.body as { model: string; messages: unknown[] };
    // The agent config names a model: it wins over the provider's.
    expect(second.model).toBe("claude-haiku-4-5");
    expect(second.messages.at(-1)).toStrictEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_01A09q90qw90lq917835lq9",
          content: "Lisbon: sunny, 21°C",
        },
        {
          type: "tool_result",
          tool_use_id: "toolu_01B19q90qw90lq917835lq8",
          content: "Porto: sunny, 21°C",
          // The rolling breakpoint: the conversation's last block (SPEC §11.1).
          cache_control: { type: "ephemeral" },
        },
      ],
    });
    // Prompt caching is on by default: breakpoints on the tools and the system prompt.
    expect(second).toMatchObject({
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      tools: [{ name: "get_weather", cache_control: { type: "ephemeral" } }],
    });
    fake.assertComplete();
  });
});
