import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, aiSdkProvider, type RunEvent, tool } from "../../src/index.js";
import { CompatServer, chatChunk, chatCompletion } from "../support/compat-server.js";

// aiSdkProvider over a real AI SDK provider (@ai-sdk/openai-compatible) talking real HTTP to the
// local server, as a user would point it at Groq, vLLM or Ollama.

let server: CompatServer;
const handled: string[] = [];

const getWeather = tool({
  name: "get_weather",
  description: "Current weather for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => {
    handled.push(city);
    return `${city}: sunny`;
  },
});

const usage = {
  prompt_tokens: 1500,
  completion_tokens: 20,
  prompt_tokens_details: { cached_tokens: 1200 },
};

beforeEach(async () => {
  handled.length = 0;
  server = await CompatServer.start();
});

afterEach(async () => {
  await server.close();
});

const model = () =>
  createOpenAICompatible({
    name: "local",
    baseURL: server.url,
    apiKey: "sk-local-test-key",
  }).chatModel("compat-model");

describe("aiSdkProvider with @ai-sdk/openai-compatible over real HTTP", () => {
  it("runs a tool loop without streaming: usage with cache reads, tool results sent back by name", async () => {
    server.reply(
      {
        json: chatCompletion(
          {
            content: null,
            reasoning_content: "Need the tool.",
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Lisbon"}' },
              },
            ],
          },
          "tool_calls",
          usage,
        ),
      },
      { json: chatCompletion({ content: "Sunny in Lisbon." }, "stop", usage) },
    );
    const agent = new Agent({
      provider: aiSdkProvider(model(), { providerOptions: { local: { user: "u-42" } } }),
      tools: [getWeather],
    });

    const result = await agent.run("Weather in Lisbon?");

    expect(result).toMatchObject({
      status: "completed",
      output: "Sunny in Lisbon.",
      stopReason: "end_turn",
    });
    expect(handled).toEqual(["Lisbon"]);
    expect(result.usage).toEqual({
      inputTokens: 600,
      outputTokens: 40,
      cacheReadTokens: 2400,
      cacheWriteTokens: 0,
    });
    expect(result.messages[1]?.content[0]).toMatchObject({
      type: "thinking",
      text: "Need the tool.",
    });
    const second = server.body(1);
    expect(second).toMatchObject({ model: "compat-model", user: "u-42" });
    expect(second.messages).toContainEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "Lisbon: sunny",
    });
  });

  it("streams a tool loop: deltas, the call assembled, the final answer", async () => {
    server.reply(
      {
        chunks: [
          chatChunk({ role: "assistant", content: "Checking " }),
          chatChunk({ content: "now." }),
          chatChunk({
            tool_calls: [
              {
                index: 0,
                id: "call_7",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":' },
              },
            ],
          }),
          chatChunk({ tool_calls: [{ index: 0, function: { arguments: '"Porto"}' } }] }),
          chatChunk({}, { finish: "tool_calls", usage }),
        ],
      },
      { chunks: [chatChunk({ content: "Sunny." }, { finish: "stop", usage })] },
    );
    const agent = new Agent({ provider: aiSdkProvider(model()), tools: [getWeather] });

    const events: RunEvent[] = [];
    for await (const event of agent.runStream("Weather in Porto?")) events.push(event);

    expect(handled).toEqual(["Porto"]);
    expect(events.at(-1)).toMatchObject({ result: { status: "completed", output: "Sunny." } });
    expect(server.body(0)).toMatchObject({ stream: true });
  });

  it("maps the server's 429 to rate_limited with its retry-after", async () => {
    server.reply({
      json: { error: { message: "Rate limit reached", type: "rate_limit_exceeded" } },
      status: 429,
      headers: { "retry-after": "2" },
    });
    const provider = aiSdkProvider(
      createOpenAICompatible({ name: "local", baseURL: server.url }).chatModel("compat-model"),
    );
    const agent = new Agent({ provider });

    const result = await agent.run("hi");

    expect(result.error).toMatchObject({
      code: "rate_limited",
      retryable: true,
      retryAfterMs: 2000,
    });
  });
});
