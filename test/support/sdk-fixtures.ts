import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type {
  Message,
  Provider,
  ProviderCallOptions,
  ProviderRequest,
  ProviderResponse,
  ProviderStreamEvent,
} from "../../src/index.js";
import { anthropicProvider, openaiProvider } from "../../src/index.js";
import { FakeFetch, type FakeReply } from "../../src/testing.js";

import { collect } from "./collect.js";
import { rejection } from "./rejection.js";

export { collect, rejection };

/** A key that must never appear in anything harnessx produces. */
export const CANARY_KEY = "sk-canary-7f3a9c2e5b1d4f6a8e0c2b4d6f8a0c2e";

/** A recorded body from test/fixtures/providers/, as text. */
export const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/providers/${name}`, import.meta.url), "utf8");

export const jsonFixture = (name: string): unknown => JSON.parse(fixture(name));

export const weatherTool = {
  name: "get_weather",
  description: "Current weather for a city.",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
};

/** A conversation with a tool call, its (failed) result and an empty text block to drop. */
export const toolHistory: Message[] = [
  { role: "user", content: [{ type: "text", text: "Weather in Lisbon?" }] },
  {
    role: "assistant",
    content: [
      { type: "thinking", text: "Use the tool." },
      { type: "text", text: "Checking." },
      { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Lisbon" } },
    ],
  },
  {
    role: "tool",
    content: [{ type: "tool_result", toolCallId: "call_1", content: "boom", isError: true }],
  },
  {
    role: "user",
    content: [
      { type: "text", text: "" },
      { type: "text", text: "And Porto?" },
    ],
  },
];

/** A finished Responses API response with the given output items and token counts. */
export const responsesReply = (
  output: unknown[],
  usage: { input: number; cached: number; output: number },
) => ({
  id: "resp_recorded",
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

/** An assistant message output item of the Responses API. */
export const messageItem = (text: string) => ({
  id: "msg_recorded",
  type: "message",
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [] }],
});

export const request = (overrides: Partial<ProviderRequest> = {}): ProviderRequest => ({
  system: "You are a travel assistant.",
  messages: [{ role: "user", content: [{ type: "text", text: "Weather in Lisbon and Porto?" }] }],
  tools: [weatherTool],
  model: "default",
  maxTokens: 1024,
  temperature: 1,
  stream: false,
  prefixKey: null,
  ...overrides,
});

/** An OpenAI provider whose SDK client talks to a FakeFetch (no retries, so errors surface at once). */
export function fakeOpenAI(
  replies: FakeReply[],
  options: { api?: "responses" | "chat"; model?: string } = {},
) {
  const fake = new FakeFetch(replies);
  const client = new OpenAI({ apiKey: CANARY_KEY, fetch: fake.fetch, maxRetries: 0 });
  const provider = openaiProvider({
    model: options.model ?? "gpt-5-mini",
    client,
    api: options.api ?? "responses",
  });
  return { fake, provider };
}

export function fakeAnthropic(replies: FakeReply[], options: { model?: string } = {}) {
  const fake = new FakeFetch(replies);
  const client = new Anthropic({ apiKey: CANARY_KEY, fetch: fake.fetch, maxRetries: 0 });
  const provider = anthropicProvider({ model: options.model ?? "claude-sonnet-4-5", client });
  return { fake, provider };
}

/** A server-sent-events body of named events (`event: <type>` then `data: <json>`). */
export const sseOf = (events: ReadonlyArray<{ type: string; [field: string]: unknown }>): string =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");

/** The provider's stream (every SDK adapter has one). */
export function streamOf(
  provider: Provider,
  providerRequest: ProviderRequest,
  options?: ProviderCallOptions,
): AsyncIterable<ProviderStreamEvent> {
  if (provider.stream === undefined) throw new Error(`${provider.name} has no stream()`);
  return provider.stream(providerRequest, options);
}

/** An expected canonical response: `toolCalls` are the content's tool_use blocks, in order. */
export function expectedResponse(response: Omit<ProviderResponse, "toolCalls">): ProviderResponse {
  const toolCalls = response.content.flatMap((block) =>
    block.type === "tool_use" ? [{ id: block.id, name: block.name, input: block.input }] : [],
  );
  return {
    content: response.content,
    toolCalls,
    stopReason: response.stopReason,
    usage: response.usage,
    model: response.model,
    ...(response.id === undefined ? {} : { id: response.id }),
  };
}

/** Streams a request: the deltas, and the response that must come last. */
export async function streamed(
  provider: Provider,
  providerRequest: ProviderRequest = request({ stream: true }),
): Promise<{ deltas: ProviderStreamEvent[]; response: ProviderResponse | undefined }> {
  const events = await collect(streamOf(provider, providerRequest));
  const last = events.at(-1);
  return {
    deltas: events.slice(0, -1),
    response: last?.type === "response" ? last.response : undefined,
  };
}
