import { describe, expect, it } from "vitest";
import type { ProviderStreamEvent } from "../../../src/index.js";
import { ProviderError } from "../../../src/index.js";
import {
  collect,
  expectedResponse,
  fakeAnthropic,
  fixture,
  jsonFixture,
  rejection,
  request,
  streamed,
  streamOf,
  toolHistory,
  weatherTool,
} from "../../support/sdk-fixtures.js";

describe("anthropicProvider complete", () => {
  it("sends the exact request body and maps thinking, text and two tool_use blocks", async () => {
    const { fake, provider } = fakeAnthropic([
      { json: jsonFixture("anthropic-message-tool-use.json") },
    ]);
    const response = await provider.complete(request());

    expect(fake.requests[0]?.url).toBe("https://api.anthropic.com/v1/messages");
    expect(fake.requests[0]?.headers.authorization).toBe("[redacted]");
    expect(fake.requests[0]?.body).toStrictEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather in Lisbon and Porto?" }] },
      ],
      system: "You are a travel assistant.",
      tools: [
        {
          name: "get_weather",
          description: "Current weather for a city.",
          input_schema: weatherTool.inputSchema,
        },
      ],
    });
    expect(response).toStrictEqual(
      expectedResponse({
        id: "msg_01Aq9w938a90dw8q",
        content: [
          {
            type: "thinking",
            text: "Two cities: call the tool twice.",
            providerData: { signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
          },
          { type: "text", text: "I'll check both cities." },
          {
            type: "tool_use",
            id: "toolu_01A09q90qw90lq917835lq9",
            name: "get_weather",
            input: { city: "Lisbon" },
          },
          {
            type: "tool_use",
            id: "toolu_01B19q90qw90lq917835lq8",
            name: "get_weather",
            input: { city: "Porto" },
          },
        ],
        stopReason: "tool_use",
        usage: { inputTokens: 48, outputTokens: 96, cacheReadTokens: 1850, cacheWriteTokens: 0 },
        model: "claude-sonnet-4-5-20250929",
      }),
    );
  });

  it("sends tool results in a user turn, merges same-role turns and marks cache breakpoints for a prefixKey", async () => {
    const { fake, provider } = fakeAnthropic([
      { json: jsonFixture("anthropic-message-tool-use.json") },
    ]);
    const second = { ...weatherTool, name: "get_time", description: "Local time." };
    await provider.complete(
      request({
        messages: toolHistory,
        tools: [weatherTool, second],
        prefixKey: "p1",
        temperature: 0,
        model: "claude-opus-4-1",
      }),
    );
    expect(fake.requests[0]?.body).toStrictEqual({
      model: "claude-opus-4-1",
      max_tokens: 1024,
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather in Lisbon?" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Lisbon" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: "boom", is_error: true },
            // The rolling breakpoint: the conversation's last block.
            { type: "text", text: "And Porto?", cache_control: { type: "ephemeral" } },
          ],
        },
      ],
      system: [
        { type: "text", text: "You are a travel assistant.", cache_control: { type: "ephemeral" } },
      ],
      tools: [
        {
          name: "get_weather",
          description: "Current weather for a city.",
          input_schema: weatherTool.inputSchema,
        },
        {
          name: "get_time",
          description: "Local time.",
          input_schema: weatherTool.inputSchema,
          cache_control: { type: "ephemeral" },
        },
      ],
      temperature: 0,
    });
  });
});

describe("anthropicProvider stream", () => {
  it("yields thinking and text deltas, then the response with input_json_delta assembled", async () => {
    const { provider } = fakeAnthropic([
      { sse: fixture("anthropic-stream-tool-use.sse"), chunkSize: 80 },
    ]);
    const { deltas, response } = await streamed(provider);
    expect(deltas).toStrictEqual<ProviderStreamEvent[]>([
      { type: "thinking_delta", text: "The user wants " },
      { type: "thinking_delta", text: "Lisbon's weather." },
      { type: "text_delta", text: "Okay, let" },
      { type: "text_delta", text: "'s check." },
    ]);
    expect(response).toStrictEqual(
      expectedResponse({
        id: "msg_014p7gG3wDgGV9EUtLvnow3U",
        content: [
          {
            type: "thinking",
            text: "The user wants Lisbon's weather.",
            providerData: { signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
          },
          { type: "text", text: "Okay, let's check." },
          {
            type: "tool_use",
            id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            name: "get_weather",
            input: { city: "Lisbon", unit: "celsius" },
          },
        ],
        stopReason: "tool_use",
        // message_delta's cumulative output count replaces message_start's.
        usage: { inputTokens: 472, outputTokens: 89, cacheReadTokens: 0, cacheWriteTokens: 1600 },
        model: "claude-sonnet-4-5-20250929",
      }),
    );
  });

  it("fails a stream cut mid tool input with a retryable ProviderError", async () => {
    const { provider } = fakeAnthropic([{ sse: fixture("anthropic-stream-cut.sse") }]);
    const error = await rejection(collect(streamOf(provider, request({ stream: true }))));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "unavailable", retryable: true });
  });

  it("turns an overloaded_error event inside the stream into code unavailable", async () => {
    const { provider } = fakeAnthropic([{ sse: fixture("anthropic-stream-overloaded.sse") }]);
    const error = await rejection(collect(streamOf(provider, request({ stream: true }))));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "unavailable", retryable: true });
    expect((error as Error).message).toContain("Overloaded");
  });
});
