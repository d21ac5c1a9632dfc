import {
  APICallError,
  type LanguageModelV2,
  type LanguageModelV2StreamPart,
  type LanguageModelV3GenerateResult,
  type LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, aiSdkProvider, ConfigError, ProviderError, tool } from "../../../src/index.js";
import { collect, rejection, request, streamOf } from "../../support/sdk-fixtures.js";

const streamOfParts = <T>(parts: readonly T[]): ReadableStream<T> =>
  new ReadableStream<T>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });

const usageV3 = (noCache: number, cacheRead: number, cacheWrite: number, output: number) => ({
  inputTokens: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

const ANTHROPIC_META = { anthropic: { signature: "sig-abc123" } };

const toolTurn: LanguageModelV3GenerateResult = {
  content: [
    { type: "reasoning", text: "Use the tool.", providerMetadata: ANTHROPIC_META },
    { type: "text", text: "Checking." },
    {
      type: "tool-call",
      toolCallId: "call_1",
      toolName: "get_weather",
      input: '{"city":"Lisbon"}',
    },
  ],
  finishReason: { unified: "tool-calls", raw: "tool_use" },
  usage: usageV3(100, 1200, 50, 20),
  response: { id: "resp_1", modelId: "claude-sonnet-4-5-20250929" },
  warnings: [],
};

const finalTurn: LanguageModelV3GenerateResult = {
  content: [{ type: "text", text: "Sunny." }],
  finishReason: { unified: "stop", raw: "end_turn" },
  usage: usageV3(30, 1300, 0, 3),
  warnings: [],
};

const getWeather = tool({
  name: "get_weather",
  description: "Current weather for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => `${city}: sunny`,
});

describe("aiSdkProvider on a v3 model (ai/test MockLanguageModelV3)", () => {
  it("completes through doGenerate: usage with cache, finish reasons, reasoning metadata round-tripped, tool names on results", async () => {
    const model = new MockLanguageModelV3({
      provider: "anthropic.messages",
      modelId: "claude-sonnet-4-5",
      doGenerate: [toolTurn, finalTurn],
    });
    const agent = new Agent({
      provider: aiSdkProvider(model, {
        providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } },
      }),
      tools: [getWeather],
      config: { systemPrompt: "Be brief.", maxTokens: 500 },
    });

    const result = await agent.run("Weather in Lisbon?");

    expect(result).toMatchObject({ status: "completed", output: "Sunny.", stopReason: "end_turn" });
    expect(result.usage).toEqual({
      inputTokens: 130,
      outputTokens: 23,
      cacheReadTokens: 2500,
      cacheWriteTokens: 50,
    });
    expect(result.messages[1]?.content[0]).toEqual({
      type: "thinking",
      text: "Use the tool.",
      providerData: ANTHROPIC_META,
    });
    const second = model.doGenerateCalls[1];
    expect(second).toMatchObject({
      maxOutputTokens: 500,
      providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } },
      tools: [
        { type: "function", name: "get_weather", description: "Current weather for a city." },
      ],
    });
    expect(second?.prompt).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Weather in Lisbon?" }] },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Use the tool.", providerOptions: ANTHROPIC_META },
          { type: "text", text: "Checking." },
          {
            type: "tool-call",
            toolCallId: "call_1",
            toolName: "get_weather",
            input: { city: "Lisbon" },
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "get_weather",
            output: { type: "text", value: "Lisbon: sunny" },
          },
        ],
      },
    ]);
  });

  it("streams through doStream: text and reasoning deltas, metadata from reasoning-end, the final tool call", async () => {
    const parts: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: "resp_2", modelId: "gemini-2.5-flash" },
      { type: "reasoning-start", id: "r1" },
      { type: "reasoning-delta", id: "r1", delta: "Think" },
      { type: "reasoning-delta", id: "r1", delta: "ing." },
      {
        type: "reasoning-end",
        id: "r1",
        providerMetadata: { google: { thoughtSignature: "ts-1" } },
      },
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "Let me " },
      { type: "text-delta", id: "t1", delta: "check." },
      { type: "text-end", id: "t1" },
      { type: "tool-input-start", id: "call_9", toolName: "get_weather" },
      { type: "tool-input-delta", id: "call_9", delta: '{"city":"Porto"}' },
      { type: "tool-input-end", id: "call_9" },
      {
        type: "tool-call",
        toolCallId: "call_9",
        toolName: "get_weather",
        input: '{"city":"Porto"}',
      },
      {
        type: "finish",
        finishReason: { unified: "tool-calls", raw: "STOP" },
        usage: usageV3(40, 0, 0, 12),
      },
    ];
    const model = new MockLanguageModelV3({ doStream: { stream: streamOfParts(parts) } });

    const events = await collect(streamOf(aiSdkProvider(model), request({ stream: true })));

    expect(events.slice(0, -1)).toEqual([
      { type: "thinking_delta", text: "Think" },
      { type: "thinking_delta", text: "ing." },
      { type: "text_delta", text: "Let me " },
      { type: "text_delta", text: "check." },
    ]);
    expect(events.at(-1)).toEqual({
      type: "response",
      response: {
        id: "resp_2",
        content: [
          {
            type: "thinking",
            text: "Thinking.",
            providerData: { google: { thoughtSignature: "ts-1" } },
          },
          { type: "text", text: "Let me check." },
          { type: "tool_use", id: "call_9", name: "get_weather", input: { city: "Porto" } },
        ],
        toolCalls: [{ id: "call_9", name: "get_weather", input: { city: "Porto" } }],
        stopReason: "tool_use",
        usage: { inputTokens: 40, outputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0 },
        model: "gemini-2.5-flash",
      },
    });
  });

  it("maps finish reasons: length → max_tokens (a cut tool call → output_truncated), content-filter → refusal", async () => {
    const turn = (
      content: LanguageModelV3GenerateResult["content"],
      unified: "length" | "content-filter",
    ) => ({
      ...finalTurn,
      content,
      finishReason: { unified, raw: undefined },
    });
    const model = new MockLanguageModelV3({
      doGenerate: [
        turn([{ type: "text", text: "Once upon" }], "length"),
        turn([{ type: "text", text: "I can't help." }], "content-filter"),
        turn(
          [{ type: "tool-call", toolCallId: "c", toolName: "get_weather", input: '{"ci' }],
          "length",
        ),
      ],
    });
    const provider = aiSdkProvider(model);

    expect((await provider.complete(request())).stopReason).toBe("max_tokens");
    expect((await provider.complete(request())).stopReason).toBe("refusal");
    const error = await rejection(provider.complete(request()));
    expect(error).toMatchObject({ code: "output_truncated", retryable: false });
    expect((error as Error).message).toContain("maxTokens");
  });

  it("maps an APICallError by status with retry-after, and scrubs its message", async () => {
    const failing = (statusCode: number, headers: Record<string, string> = {}) =>
      new MockLanguageModelV3({
        doGenerate: async () => {
          throw new APICallError({
            message: `Rate limited for key sk-live-canary0123456789 (status ${statusCode})`,
            url: "https://api.example.com/v1/chat",
            requestBodyValues: { secret: "body" },
            statusCode,
            responseHeaders: headers,
            isRetryable: statusCode >= 429,
          });
        },
      });

    const limited = await rejection(
      aiSdkProvider(failing(429, { "retry-after": "3" })).complete(request()),
    );
    const auth = await rejection(aiSdkProvider(failing(401)).complete(request()));
    const down = await rejection(aiSdkProvider(failing(503)).complete(request()));

    expect(limited).toBeInstanceOf(ProviderError);
    expect(limited).toMatchObject({ code: "rate_limited", retryable: true, retryAfterMs: 3000 });
    expect(auth).toMatchObject({ code: "auth", retryable: false });
    expect(down).toMatchObject({ code: "unavailable", retryable: true });
    for (const error of [limited, auth, down]) {
      expect(
        JSON.stringify({ error, message: (error as Error).message, cause: (error as Error).cause }),
      ).not.toContain("canary0123456789");
      expect((error as Error).cause).not.toBeInstanceOf(Error);
    }
  });

  it("an error part inside the stream fails the call with a ProviderError", async () => {
    const model = new MockLanguageModelV3({
      doStream: {
        stream: streamOfParts<LanguageModelV3StreamPart>([
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "Hel" },
          {
            type: "error",
            error: new APICallError({
              message: "overloaded",
              url: "u",
              requestBodyValues: {},
              statusCode: 529,
            }),
          },
        ]),
      },
    });

    const error = await rejection(
      collect(streamOf(aiSdkProvider(model), request({ stream: true }))),
    );

    expect(error).toMatchObject({ code: "unavailable", retryable: true });
  });

  it("refuses what is not a v2 or v3 language model", () => {
    expect(() =>
      aiSdkProvider({ specificationVersion: "v1" } as unknown as LanguageModelV2),
    ).toThrow(ConfigError);
  });
});

describe("aiSdkProvider on a v2 model", () => {
  // A v2 model as the AI SDK 5 providers implement it: flat usage (input includes cached), string finish reasons.
  const v2Model = (
    generate: LanguageModelV2["doGenerate"],
    stream?: LanguageModelV2["doStream"],
  ): LanguageModelV2 & {
    calls: unknown[];
  } => {
    const calls: unknown[] = [];
    return {
      specificationVersion: "v2",
      provider: "mistral.chat",
      modelId: "mistral-large-latest",
      supportedUrls: {},
      calls,
      doGenerate: (options) => {
        calls.push(options);
        return generate(options);
      },
      doStream: stream ?? (() => Promise.reject(new Error("no stream"))),
    };
  };

  it("completes: v2 usage (cached inside input), string finish reasons, tool calls", async () => {
    const model = v2Model(async () => ({
      content: [
        { type: "reasoning", text: "Plan.", providerMetadata: { mistral: { id: "r-1" } } },
        { type: "tool-call", toolCallId: "t1", toolName: "get_weather", input: '{"city":"Faro"}' },
      ],
      finishReason: "tool-calls",
      usage: { inputTokens: 500, outputTokens: 9, totalTokens: 509, cachedInputTokens: 400 },
      warnings: [],
    }));

    const response = await aiSdkProvider(model).complete(request());

    expect(response).toEqual({
      content: [
        { type: "thinking", text: "Plan.", providerData: { mistral: { id: "r-1" } } },
        { type: "tool_use", id: "t1", name: "get_weather", input: { city: "Faro" } },
      ],
      toolCalls: [{ id: "t1", name: "get_weather", input: { city: "Faro" } }],
      stopReason: "tool_use",
      usage: { inputTokens: 100, outputTokens: 9, cacheReadTokens: 400, cacheWriteTokens: 0 },
      model: "mistral-large-latest",
    });
  });

  it("streams: v2 parts and a string finish reason", async () => {
    const parts: LanguageModelV2StreamPart[] = [
      { type: "text-start", id: "0" },
      { type: "text-delta", id: "0", delta: "Bom " },
      { type: "text-delta", id: "0", delta: "dia." },
      { type: "text-end", id: "0" },
      {
        type: "finish",
        finishReason: "stop",
        usage: { inputTokens: 7, outputTokens: 2, totalTokens: 9 },
      },
    ];
    const model = v2Model(
      () => Promise.reject(new Error("unused")),
      async () => ({ stream: streamOfParts(parts) }),
    );

    const events = await collect(streamOf(aiSdkProvider(model), request({ stream: true })));

    expect(events.at(-1)).toMatchObject({
      type: "response",
      response: {
        content: [{ type: "text", text: "Bom dia." }],
        stopReason: "end_turn",
        usage: { inputTokens: 7, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    });
  });
});
