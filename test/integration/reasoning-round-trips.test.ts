import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Agent, anthropicProvider, openaiProvider, type RunEvent, tool } from "../../src/index.js";
import { CompatServer } from "../support/compat-server.js";
import { messageItem, responsesReply } from "../support/sdk-fixtures.js";

// Reasoning kept as `thinking` blocks with `providerData` and sent back unchanged (SPEC §11.1),
// through the official SDKs over real local HTTP.

let server: CompatServer;

const getWeather = tool({
  name: "get_weather",
  description: "Current weather for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => `${city}: sunny`,
});

beforeEach(async () => {
  vi.stubEnv("OPENAI_API_KEY", "");
  vi.stubEnv("ANTHROPIC_API_KEY", "");
  server = await CompatServer.start();
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

const reasoningItem = {
  id: "rs_0a1b2c3d4e5f",
  type: "reasoning",
  summary: [],
  encrypted_content: "gAAAAABo-encrypted-reasoning-state==",
};

const functionCall = {
  id: "fc_0a1b2c",
  type: "function_call",
  status: "completed",
  call_id: "call_lisbon",
  name: "get_weather",
  arguments: '{"city":"Lisbon"}',
};

describe("OpenAI Responses: reasoning items", () => {
  it("keeps an encrypted reasoning item (store: false) and sends it back before its call", async () => {
    server.reply(
      { json: responsesReply([reasoningItem, functionCall], { input: 50, cached: 0, output: 20 }) },
      { json: responsesReply([messageItem("Sunny.")], { input: 80, cached: 40, output: 3 }) },
    );
    const provider = openaiProvider({
      model: "gpt-5-mini",
      baseURL: server.url,
      extraBody: {
        store: false,
        include: ["reasoning.encrypted_content"],
        reasoning: { effort: "low" },
      },
    });
    const agent = new Agent({ provider, tools: [getWeather] });

    const result = await agent.run("Weather in Lisbon?");

    expect(result).toMatchObject({ status: "completed", output: "Sunny.", stopReason: "end_turn" });
    // Stored with the run: the thinking block holds the item as the API gave it.
    expect(result.messages[1]?.content[0]).toEqual({
      type: "thinking",
      text: "",
      providerData: reasoningItem,
    });
    const second = server.body(1);
    expect(second).toMatchObject({
      store: false,
      include: ["reasoning.encrypted_content"],
      reasoning: { effort: "low" },
    });
    expect(second.input).toEqual([
      { role: "user", content: "Weather in Lisbon?" },
      reasoningItem,
      {
        type: "function_call",
        call_id: "call_lisbon",
        name: "get_weather",
        arguments: '{"city":"Lisbon"}',
      },
      { type: "function_call_output", call_id: "call_lisbon", output: "Lisbon: sunny" },
    ]);
  });
});

const anthropicMessage = (content: unknown[], stop: string) => ({
  id: "msg_compat",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: {
    input_tokens: 20,
    output_tokens: 10,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  },
});

const SIGNATURE = "EqQBCgIYAhIMsig-canary-roundtrip";
const REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

describe("Anthropic: thinking signatures and redacted thinking", () => {
  it("keeps both and sends them back unchanged on the tool-use continuation", async () => {
    server.reply(
      {
        json: anthropicMessage(
          [
            { type: "thinking", thinking: "Call the tool.", signature: SIGNATURE },
            { type: "redacted_thinking", data: REDACTED },
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Lisbon" } },
          ],
          "tool_use",
        ),
      },
      { json: anthropicMessage([{ type: "text", text: "Sunny." }], "end_turn") },
    );
    const provider = anthropicProvider({
      model: "claude-sonnet-4-5",
      baseURL: server.root,
      extraBody: {
        thinking: { type: "enabled", budget_tokens: 2048 },
        metadata: { user_id: "u-1" },
      },
    });
    const agent = new Agent({ provider, tools: [getWeather] });

    const result = await agent.run("Weather in Lisbon?");

    expect(result).toMatchObject({ status: "completed", output: "Sunny." });
    expect(result.messages[1]?.content.slice(0, 2)).toEqual([
      { type: "thinking", text: "Call the tool.", providerData: { signature: SIGNATURE } },
      { type: "thinking", text: "", providerData: { type: "redacted_thinking", data: REDACTED } },
    ]);
    const second = server.body(1);
    expect(second).toMatchObject({
      thinking: { type: "enabled", budget_tokens: 2048 },
      metadata: { user_id: "u-1" },
    });
    expect((second.messages as unknown[])[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Call the tool.", signature: SIGNATURE },
        { type: "redacted_thinking", data: REDACTED },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Lisbon" } },
      ],
    });
  });

  it("assembles a streamed signature (signature_delta) and sends it back", async () => {
    const start = anthropicMessage([], "end_turn");
    server.reply(
      {
        events: [
          { type: "message_start", message: { ...start, stop_reason: null } },
          {
            type: "content_block_start",
            index: 0,
            content_block: { type: "thinking", thinking: "", signature: "" },
          },
          {
            type: "content_block_delta",
            index: 0,
            delta: { type: "thinking_delta", thinking: "Use it." },
          },
          {
            type: "content_block_delta",
            index: 0,
            delta: { type: "signature_delta", signature: SIGNATURE },
          },
          { type: "content_block_stop", index: 0 },
          {
            type: "content_block_start",
            index: 1,
            content_block: { type: "tool_use", id: "toolu_2", name: "get_weather", input: {} },
          },
          {
            type: "content_block_delta",
            index: 1,
            delta: { type: "input_json_delta", partial_json: '{"city":"Porto"}' },
          },
          { type: "content_block_stop", index: 1 },
          {
            type: "message_delta",
            delta: { stop_reason: "tool_use", stop_sequence: null },
            usage: { output_tokens: 12 },
          },
          { type: "message_stop" },
        ],
      },
      {
        events: [
          { type: "message_start", message: { ...start, stop_reason: null } },
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Sunny." } },
          { type: "content_block_stop", index: 0 },
          {
            type: "message_delta",
            delta: { stop_reason: "end_turn", stop_sequence: null },
            usage: { output_tokens: 2 },
          },
          { type: "message_stop" },
        ],
      },
    );
    const agent = new Agent({
      provider: anthropicProvider({ model: "claude-sonnet-4-5", baseURL: server.root }),
      tools: [getWeather],
      config: { promptCaching: true },
    });

    const events: RunEvent[] = [];
    for await (const event of agent.runStream("Weather in Porto?")) events.push(event);

    expect(events.at(-1)).toMatchObject({ result: { status: "completed", output: "Sunny." } });
    const messages = server.body(1).messages as Array<{ role: string; content: unknown[] }>;
    expect(messages[1]?.content[0]).toEqual({
      type: "thinking",
      thinking: "Use it.",
      signature: SIGNATURE,
    });
    // The rolling breakpoint sits on the conversation's last block only.
    expect(messages.at(-1)?.content.at(-1)).toMatchObject({
      type: "tool_result",
      cache_control: { type: "ephemeral" },
    });
    expect(JSON.stringify(messages.slice(0, -1))).not.toContain("cache_control");
  });
});
