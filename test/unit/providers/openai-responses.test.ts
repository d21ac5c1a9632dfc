import { describe, expect, it } from "vitest";
import type { ProviderStreamEvent } from "../../../src/index.js";
import { ProviderError } from "../../../src/index.js";
import {
  collect,
  expectedResponse,
  fakeOpenAI,
  fixture,
  jsonFixture,
  rejection,
  request,
  sseOf,
  streamed,
  streamOf,
  toolHistory,
  weatherTool,
} from "../../support/sdk-fixtures.js";

describe("openaiProvider (Responses API) complete", () => {
  it("sends the exact request body and maps a multi-tool-call response", async () => {
    const { fake, provider } = fakeOpenAI([
      { json: jsonFixture("openai-responses-tool-calls.json") },
    ]);
    const response = await provider.complete(request());

    expect(fake.requests).toHaveLength(1);
    const [sent] = fake.requests;
    expect(sent?.url).toBe("https://api.openai.com/v1/responses");
    expect(sent?.method).toBe("POST");
    expect(sent?.headers.authorization).toBe("[redacted]");
    expect(sent?.body).toStrictEqual({
      model: "gpt-5-mini",
      input: [{ role: "user", content: "Weather in Lisbon and Porto?" }],
      instructions: "You are a travel assistant.",
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "Current weather for a city.",
          parameters: weatherTool.inputSchema,
          strict: false,
        },
      ],
      max_output_tokens: 1024,
    });

    expect(response).toStrictEqual(
      expectedResponse({
        id: "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        content: [
          {
            type: "thinking",
            text: "The user wants the weather in two cities.",
            providerData: {
              id: "rs_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
              type: "reasoning",
              summary: [
                { type: "summary_text", text: "The user wants the weather in two cities." },
              ],
            },
          },
          { type: "text", text: "Checking both cities." },
          { type: "tool_use", id: "call_12345xyz", name: "get_weather", input: { city: "Lisbon" } },
          { type: "tool_use", id: "call_67890abc", name: "get_weather", input: { city: "Porto" } },
        ],
        stopReason: "tool_use",
        // 2006 input tokens of which 1920 cached: inputTokens excludes them.
        usage: { inputTokens: 86, outputTokens: 120, cacheReadTokens: 1920, cacheWriteTokens: 0 },
        model: "gpt-5-mini-2025-08-07",
      }),
    );
  });

  it("converts a conversation with tool calls and results; prefixKey, temperature and model go through", async () => {
    const { fake, provider } = fakeOpenAI([
      { json: jsonFixture("openai-responses-tool-calls.json") },
    ]);
    await provider.complete(
      request({
        messages: toolHistory,
        model: "gpt-5",
        temperature: 0.2,
        prefixKey: "a1b2c3",
        tools: [],
        system: "",
      }),
    );
    expect(fake.requests[0]?.body).toStrictEqual({
      model: "gpt-5",
      input: [
        { role: "user", content: "Weather in Lisbon?" },
        { role: "assistant", content: "Checking." },
        {
          type: "function_call",
          call_id: "call_1",
          name: "get_weather",
          arguments: '{"city":"Lisbon"}',
        },
        { type: "function_call_output", call_id: "call_1", output: "boom" },
        { role: "user", content: "And Porto?" },
      ],
      max_output_tokens: 1024,
      temperature: 0.2,
      prompt_cache_key: "a1b2c3",
    });
  });

  it("maps an incomplete response to max_tokens", async () => {
    const body = jsonFixture("openai-responses-tool-calls.json") as Record<string, unknown>;
    const incomplete = {
      ...body,
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [(body.output as unknown[])[1]],
    };
    const { provider } = fakeOpenAI([{ json: incomplete }]);
    const response = await provider.complete(request());
    expect(response.stopReason).toBe("max_tokens");
    expect(response.toolCalls).toEqual([]);
  });
});

describe("openaiProvider (Responses API) stream", () => {
  it("yields reasoning and text deltas, then the response with tool arguments assembled", async () => {
    const { fake, provider } = fakeOpenAI([
      { sse: fixture("openai-responses-stream-tool-call.sse"), chunkSize: 97 },
    ]);
    const { deltas, response } = await streamed(provider);

    expect(fake.requests[0]?.body).toMatchObject({ stream: true, model: "gpt-5-mini" });
    expect(deltas).toStrictEqual<ProviderStreamEvent[]>([
      { type: "thinking_delta", text: "Need the " },
      { type: "thinking_delta", text: "weather tool." },
      { type: "text_delta", text: "Let me" },
      { type: "text_delta", text: " check." },
    ]);
    expect(response).toStrictEqual(
      expectedResponse({
        id: "resp_68af4030592c81938ec0a5fbab4a3e9f05438e46b5f69a3b",
        content: [
          {
            type: "thinking",
            text: "Need the weather tool.",
            providerData: {
              id: "rs_68af4030baa48193b0d8ad1c7ecf7f6e05438e46b5f69a3b",
              type: "reasoning",
              summary: [{ type: "summary_text", text: "Need the weather tool." }],
            },
          },
          { type: "text", text: "Let me check." },
          {
            type: "tool_use",
            id: "call_Xk3Yq2",
            name: "get_weather",
            input: { city: "Lisbon", unit: "celsius" },
          },
        ],
        stopReason: "tool_use",
        usage: { inputTokens: 176, outputTokens: 58, cacheReadTokens: 1024, cacheWriteTokens: 0 },
        model: "gpt-5-mini-2025-08-07",
      }),
    );
  });

  it("fails a stream cut before response.completed with a retryable ProviderError", async () => {
    const { provider } = fakeOpenAI([{ sse: fixture("openai-responses-stream-cut.sse") }]);
    const seen: ProviderStreamEvent[] = [];
    const error = await rejection(
      (async () => {
        for await (const event of streamOf(provider, request({ stream: true }))) seen.push(event);
      })(),
    );
    expect(seen.map((event) => event.type)).not.toContain("response");
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "unavailable", retryable: true, phase: "provider" });
    expect((error as Error).message).toContain("stream ended before the response was complete");
  });

  it("fails a stream whose connection breaks mid-way with a retryable ProviderError", async () => {
    const { provider } = fakeOpenAI([
      { sse: fixture("openai-responses-stream-cut.sse"), end: "error" },
    ]);
    const error = await rejection(collect(streamOf(provider, request({ stream: true }))));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "unavailable", retryable: true });
    expect((error as Error).message).toContain("terminated");
  });

  it.each([
    {
      label: "a response.failed event",
      event: {
        type: "response.failed",
        response: {
          ...(jsonFixture("openai-responses-tool-calls.json") as object),
          status: "failed",
          output: [],
          error: { code: "rate_limit_exceeded", message: "Rate limit reached for gpt-5-mini." },
        },
      },
      code: "rate_limited",
    },
    {
      label: "an error event",
      event: {
        type: "error",
        code: "server_error",
        message: "The server had an error.",
        param: null,
      },
      code: "unavailable",
    },
  ])(
    "turns $label inside the stream into a ProviderError with code $code",
    async ({ event, code }) => {
      const { provider } = fakeOpenAI([{ sse: sseOf([event]) }]);
      const error = await rejection(collect(streamOf(provider, request({ stream: true }))));
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ code, retryable: true, phase: "provider" });
    },
  );
});
