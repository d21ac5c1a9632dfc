import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, aiSdkProvider, type ProviderRequest } from "../../../src/index.js";
import {
  collect,
  fakeAnthropic,
  fakeOpenAI,
  messageItem,
  request,
  responsesReply,
  sseOf,
  streamOf,
} from "../../support/sdk-fixtures.js";
import { silent } from "../../support/silent.js";

// Structured output asked for natively (SPEC §14), through each official SDK against recorded,
// real-shaped responses: OpenAI's json_schema response format (Chat Completions and Responses),
// Anthropic's final tool, the AI SDK's responseFormat.

const schema = {
  type: "object",
  properties: { city: { type: "string" }, celsius: { type: "number" } },
  required: ["city", "celsius"],
  additionalProperties: false,
};
const output = { name: "final_output", schema };
const withOutput = (overrides: Partial<ProviderRequest> = {}) => request({ output, ...overrides });
const answer = '{"city":"Lisbon","celsius":21}';

/** A recorded Chat Completions answer in JSON mode. */
const chatAnswer = {
  id: "chatcmpl-BTx8e3Jq0s9d1wPZ",
  object: "chat.completion",
  created: 1746000000,
  model: "gpt-4.1-2025-04-14",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: answer, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: { prompt_tokens: 80, completion_tokens: 12, total_tokens: 92 },
};

/** A recorded Messages API answer that calls the final tool. */
const anthropicFinalTool = (input: unknown) => ({
  id: "msg_01Final",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [{ type: "tool_use", id: "toolu_01Final", name: "final_output", input }],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: {
    input_tokens: 60,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 20,
    service_tier: "standard",
  },
});

describe("structured output, asked for natively", () => {
  it("OpenAI Chat Completions: response_format json_schema, the answer as text", async () => {
    const { fake, provider } = fakeOpenAI([{ json: chatAnswer }], { api: "chat" });
    const response = await provider.complete(withOutput());
    expect(fake.requests[0]?.body).toMatchObject({
      response_format: {
        type: "json_schema",
        json_schema: { name: "final_output", schema, strict: false },
      },
    });
    expect(response.content).toEqual([{ type: "text", text: answer }]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("OpenAI Responses: text.format json_schema", async () => {
    const { fake, provider } = fakeOpenAI([
      { json: responsesReply([messageItem(answer)], { input: 50, cached: 0, output: 9 }) },
    ]);
    const response = await provider.complete(withOutput());
    expect(fake.requests[0]?.body).toMatchObject({
      text: { format: { type: "json_schema", name: "final_output", schema, strict: false } },
    });
    expect(response.content).toEqual([{ type: "text", text: answer }]);
  });

  it("OpenAI: no response format without config.output", async () => {
    const { fake, provider } = fakeOpenAI([{ json: chatAnswer }], { api: "chat" });
    await provider.complete(request());
    expect(fake.requests[0]?.body).not.toHaveProperty("response_format");
  });

  it("Anthropic: a forced final tool when the request has no other tools; its call is the answer", async () => {
    const { fake, provider } = fakeAnthropic([
      { json: anthropicFinalTool({ city: "Lisbon", celsius: 21 }) },
    ]);
    const response = await provider.complete(withOutput({ tools: [] }));
    const body = fake.requests[0]?.body as Record<string, unknown>;
    expect(body.tools).toEqual([
      expect.objectContaining({ name: "final_output", input_schema: schema }),
    ]);
    expect(body.tool_choice).toEqual({ type: "tool", name: "final_output" });
    expect(response.content).toEqual([{ type: "text", text: answer }]);
    expect(response.toolCalls).toEqual([]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("Anthropic: an offered final tool beside the request's tools (forcing would take them away)", async () => {
    const { fake, provider } = fakeAnthropic([
      { json: anthropicFinalTool({ city: "Porto", celsius: 19 }) },
    ]);
    await provider.complete(withOutput());
    const body = fake.requests[0]?.body as Record<string, unknown>;
    expect((body.tools as Array<{ name: string }>).map((each) => each.name)).toEqual([
      "get_weather",
      "final_output",
    ]);
    expect(body).not.toHaveProperty("tool_choice");
  });

  it("Anthropic: a non-object output is wrapped in { value } and unwrapped from the call", async () => {
    const { fake, provider } = fakeAnthropic([{ json: anthropicFinalTool({ value: ["a", "b"] }) }]);
    const response = await provider.complete(
      request({ tools: [], output: { name: "final_output", schema: { type: "array" } } }),
    );
    const body = fake.requests[0]?.body as { tools: Array<{ input_schema: unknown }> };
    expect(body.tools[0]?.input_schema).toEqual({
      type: "object",
      properties: { value: { type: "array" } },
      required: ["value"],
    });
    expect(response.content).toEqual([{ type: "text", text: '["a","b"]' }]);
  });

  it("Anthropic streaming: the final response carries the answer", async () => {
    const events = [
      {
        type: "message_start",
        message: { ...anthropicFinalTool({}), content: [], stop_reason: null },
      },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_01Final", name: "final_output", input: {} },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: answer },
      },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { output_tokens: 20 },
      },
      { type: "message_stop" },
    ];
    const { provider } = fakeAnthropic([{ sse: sseOf(events) }]);
    const streamed = await collect(streamOf(provider, withOutput({ tools: [], stream: true })));
    const last = streamed.at(-1);
    expect(last?.type === "response" ? last.response.content : undefined).toEqual([
      { type: "text", text: answer },
    ]);
  });

  it("aiSdkProvider: responseFormat json with the schema, and an agent parses the answer", async () => {
    const reply: LanguageModelV3GenerateResult = {
      content: [{ type: "text", text: answer }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 5, text: 5, reasoning: undefined },
      },
      warnings: [],
    };
    const model = new MockLanguageModelV3({ doGenerate: [reply] });
    const agent = new Agent({
      provider: aiSdkProvider(model),
      logger: silent,
      config: { output: z.object({ city: z.string(), celsius: z.number() }) },
    });
    const result = await agent.run("Weather in Lisbon?");
    expect(result.output).toEqual({ city: "Lisbon", celsius: 21 });
    expect(model.doGenerateCalls[0]?.responseFormat).toMatchObject({
      type: "json",
      name: "final_output",
      schema: { type: "object", required: ["city", "celsius"] },
    });
  });
});
