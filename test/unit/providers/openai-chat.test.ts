import { describe, expect, it } from "vitest";
import { ProviderError } from "../../../src/index.js";
import {
  collect,
  expectedResponse,
  fakeOpenAI,
  fixture,
  jsonFixture,
  rejection,
  request,
  streamed,
  streamOf,
  toolHistory,
  weatherTool,
} from "../../support/sdk-fixtures.js";

describe("openaiProvider (Chat Completions) complete", () => {
  it("sends the exact request body and maps parallel tool calls", async () => {
    const { fake, provider } = fakeOpenAI([{ json: jsonFixture("openai-chat-tool-calls.json") }], {
      api: "chat",
    });
    const response = await provider.complete(request({ messages: toolHistory, prefixKey: "k1" }));

    expect(fake.requests[0]?.url).toBe("https://api.openai.com/v1/chat/completions");
    expect(fake.requests[0]?.body).toStrictEqual({
      model: "gpt-5-mini",
      messages: [
        { role: "system", content: "You are a travel assistant." },
        { role: "user", content: "Weather in Lisbon?" },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Lisbon"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "boom" },
        { role: "user", content: "And Porto?" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Current weather for a city.",
            parameters: weatherTool.inputSchema,
          },
        },
      ],
      max_completion_tokens: 1024,
      prompt_cache_key: "k1",
    });
    expect(response).toStrictEqual(
      expectedResponse({
        id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        content: [
          { type: "tool_use", id: "call_abc123", name: "get_weather", input: { city: "Lisbon" } },
          { type: "tool_use", id: "call_def456", name: "get_weather", input: { city: "Porto" } },
        ],
        stopReason: "tool_use",
        usage: { inputTokens: 220, outputTokens: 42, cacheReadTokens: 1280, cacheWriteTokens: 0 },
        model: "gpt-4.1-2025-04-14",
      }),
    );
  });

  it("maps a refusal to its text and stopReason refusal", async () => {
    const body = jsonFixture("openai-chat-tool-calls.json") as {
      choices: Array<Record<string, unknown>>;
    };
    const refused = {
      ...body,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            refusal: "I can't help with that.",
            annotations: [],
          },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
    };
    const { provider } = fakeOpenAI([{ json: refused }], { api: "chat" });
    const response = await provider.complete(request());
    expect(response.stopReason).toBe("refusal");
    expect(response.content).toEqual([{ type: "text", text: "I can't help with that." }]);
  });
});

describe("openaiProvider (Chat Completions) stream", () => {
  it("streams text and assembles tool calls split across chunks by index", async () => {
    const { fake, provider } = fakeOpenAI(
      [{ sse: fixture("openai-chat-stream-tool-calls.sse"), chunkSize: 50 }],
      {
        api: "chat",
      },
    );
    const { deltas, response } = await streamed(provider);
    expect(fake.requests[0]?.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(deltas).toStrictEqual([
      { type: "text_delta", text: "Checking" },
      { type: "text_delta", text: " now." },
    ]);
    expect(response).toStrictEqual(
      expectedResponse({
        id: "chatcmpl-C3n7uZxq1N0pYd2s9WmAq3b8kLf2v",
        content: [
          { type: "text", text: "Checking now." },
          {
            type: "tool_use",
            id: "call_FthC9qRpsL5kBpwwyw6c7j4k",
            name: "get_weather",
            input: { city: "Lisbon" },
          },
          {
            type: "tool_use",
            id: "call_9s8LzYQe1xWc2VvRk0mT3hNa",
            name: "get_time",
            input: { zone: "Europe/Lisbon" },
          },
        ],
        stopReason: "tool_use",
        usage: { inputTokens: 388, outputTokens: 40, cacheReadTokens: 512, cacheWriteTokens: 0 },
        model: "gpt-4.1-2025-04-14",
      }),
    );
  });

  it("fails a stream cut before its finish reason", async () => {
    const full = fixture("openai-chat-stream-tool-calls.sse");
    const cut = full.slice(0, full.indexOf('"finish_reason":"tool_calls"'));
    const upToLastEvent = cut.slice(0, cut.lastIndexOf("\n\n") + 2);
    const { provider } = fakeOpenAI([{ sse: upToLastEvent }], { api: "chat" });
    const error = await rejection(collect(streamOf(provider, request({ stream: true }))));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "unavailable", retryable: true });
  });
});
