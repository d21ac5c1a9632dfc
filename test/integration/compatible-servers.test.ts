import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Agent, openaiProvider, ProviderError, type RunEvent, tool } from "../../src/index.js";
import {
  CompatServer,
  chatChunk,
  chatCompletion,
  type CompatServer as Server,
  usageChunk,
} from "../support/compat-server.js";
import { captureLogs } from "../support/log-capture.js";
import { collect, rejection, request, streamed, streamOf } from "../support/sdk-fixtures.js";

// Each test talks to a real local HTTP server through the official OpenAI SDK (`baseURL`), as a
// user pointing harnessx at vLLM, Ollama, Gemini's compatible endpoint, NIM or Groq would.

let server: Server;
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

const chat = (options: Partial<Parameters<typeof openaiProvider>[0]> = {}) =>
  openaiProvider({
    model: "compat-model",
    api: "chat",
    baseURL: server.url,
    maxRetries: 0,
    ...options,
  });

const finalText = chatCompletion({ content: "Both sunny." });
const finalStream = {
  chunks: [chatChunk({ content: "Both sunny." }, { finish: "stop" }), usageChunk(60, 4)],
};

beforeEach(async () => {
  handled.length = 0;
  // No key anywhere: a local server takes none (SPEC §11.1: apiKey optional with a baseURL).
  vi.stubEnv("OPENAI_API_KEY", "");
  vi.stubEnv("OPENAI_BASE_URL", "");
  server = await CompatServer.start({ rejectFields: ["prompt_cache_key"] });
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

describe("OpenAI-compatible servers (Chat Completions over real HTTP)", () => {
  it("Gemini: tool calls without `index` are kept, each joining the call with its id", async () => {
    server.reply(
      {
        chunks: [
          chatChunk({
            role: "assistant",
            tool_calls: [
              {
                id: "function-call-1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Lisbon"}' },
              },
            ],
          }),
          chatChunk({
            tool_calls: [
              {
                id: "function-call-2",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Porto"}' },
              },
            ],
          }),
          chatChunk({}, { finish: "tool_calls" }),
          usageChunk(40, 12),
        ],
      },
      finalStream,
    );
    const agent = new Agent({ provider: chat(), tools: [getWeather] });

    const events: RunEvent[] = [];
    for await (const event of agent.runStream("Weather in Lisbon and Porto?")) events.push(event);
    const end = events.at(-1);

    expect(handled).toEqual(["Lisbon", "Porto"]);
    expect(end).toMatchObject({
      type: "result",
      result: { status: "completed", output: "Both sunny." },
    });
    const sent = server.body(1).messages as Array<Record<string, unknown>>;
    expect(sent.filter((message) => message.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "function-call-1", content: "Lisbon: sunny" },
      { role: "tool", tool_call_id: "function-call-2", content: "Porto: sunny" },
    ]);
  });

  it("Gemini: fragments without index or id join the current call; a new name after complete arguments opens the next", async () => {
    server.reply({
      chunks: [
        chatChunk({ tool_calls: [{ function: { name: "get_weather", arguments: '{"city":' } }] }),
        chatChunk({ tool_calls: [{ function: { arguments: '"Lisbon"}' } }] }),
        chatChunk({
          tool_calls: [{ function: { name: "get_weather", arguments: '{"city":"Porto"}' } }],
        }),
        chatChunk({}, { finish: "tool_calls" }),
        usageChunk(40, 12),
      ],
    });

    const { response } = await streamed(chat());

    expect(response?.toolCalls.map((call) => [call.name, call.input])).toEqual([
      ["get_weather", { city: "Lisbon" }],
      ["get_weather", { city: "Porto" }],
    ]);
    const ids = response?.toolCalls.map((call) => call.id) ?? [];
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^call_[0-9a-f]{32}$/);
  });

  it("NIM: a function name repeated in every chunk is taken once", async () => {
    const part = (args: string, id?: string) =>
      chatChunk({
        tool_calls: [
          {
            index: 0,
            ...(id ? { id } : {}),
            type: "function",
            function: { name: "get_weather", arguments: args },
          },
        ],
      });
    server.reply(
      {
        chunks: [
          part('{"ci', "chatcmpl-tool-9f1"),
          part('ty": "Lis'),
          part('bon"}'),
          chatChunk({}, { finish: "tool_calls" }),
          usageChunk(30, 9),
        ],
      },
      finalStream,
    );
    const agent = new Agent({ provider: chat(), tools: [getWeather] });

    const events: RunEvent[] = [];
    for await (const event of agent.runStream("Weather in Lisbon?")) events.push(event);

    expect(handled).toEqual(["Lisbon"]);
    expect(events.at(-1)).toMatchObject({ result: { status: "completed" } });
  });

  it("a call without an id gets one, streamed or not (and one without `type` is kept)", async () => {
    server.reply(
      {
        json: chatCompletion(
          {
            content: null,
            tool_calls: [{ function: { name: "get_weather", arguments: '{"city":"Faro"}' } }],
          },
          "tool_calls",
        ),
      },
      {
        chunks: [
          chatChunk({
            tool_calls: [
              { index: 0, function: { name: "get_weather", arguments: '{"city":"Faro"}' } },
            ],
          }),
          chatChunk({}, { finish: "tool_calls" }),
          usageChunk(10, 3),
        ],
      },
    );
    const provider = chat();

    const completed = await provider.complete(request());
    const { response } = await streamed(provider);

    for (const each of [completed, response]) {
      expect(each?.toolCalls).toEqual([
        {
          id: expect.stringMatching(/^call_[0-9a-f]{32}$/),
          name: "get_weather",
          input: { city: "Faro" },
        },
      ]);
      expect(each?.stopReason).toBe("tool_use");
    }
  });

  it("vLLM / Ollama: reasoning_content and reasoning become thinking deltas and a thinking block", async () => {
    server.reply(
      {
        chunks: [
          chatChunk({ role: "assistant", reasoning_content: "The user " }),
          chatChunk({ reasoning_content: "greets me." }),
          chatChunk({ content: "Hello!" }, { finish: "stop" }),
          usageChunk(8, 6),
        ],
      },
      { json: chatCompletion({ content: "Hi.", reasoning: "Short answer." }) },
    );
    const provider = chat();

    const { deltas, response } = await streamed(provider, request({ stream: true, tools: [] }));
    const completed = await provider.complete(request({ tools: [] }));

    expect(deltas).toEqual([
      { type: "thinking_delta", text: "The user " },
      { type: "thinking_delta", text: "greets me." },
      { type: "text_delta", text: "Hello!" },
    ]);
    expect(response?.content).toEqual([
      { type: "thinking", text: "The user greets me." },
      { type: "text", text: "Hello!" },
    ]);
    expect(completed.content).toEqual([
      { type: "thinking", text: "Short answer." },
      { type: "text", text: "Hi." },
    ]);
  });

  it("a stream without a usage chunk reports zero usage and warns once", async () => {
    const noUsage = { chunks: [chatChunk({ content: "ok" }, { finish: "stop" })] };
    server.reply(noUsage, noUsage);
    const logs = captureLogs("warn");
    const provider = chat({ logger: logs.logger, name: "local-vllm" });

    const first = await streamed(provider, request({ stream: true }));
    const second = await streamed(provider, request({ stream: true }));

    for (const each of [first, second]) {
      expect(each.response?.usage).toEqual({
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      });
    }
    expect(logs.lines).toHaveLength(1);
    expect(JSON.parse(logs.lines[0] ?? "{}")).toMatchObject({
      level: 40,
      provider: "local-vllm",
      msg: expect.stringContaining("no usage"),
    });
  });

  it("Groq / NIM: no prompt_cache_key and max_tokens (not max_completion_tokens) off OpenAI's API", async () => {
    server.reply({ json: finalText });

    await chat().complete(request({ prefixKey: "prefix-1", maxTokens: 300 }));

    const body = server.body(0);
    expect(body).not.toHaveProperty("prompt_cache_key");
    expect(body).not.toHaveProperty("max_completion_tokens");
    expect(body.max_tokens).toBe(300);
    // No key was configured: the SDK still sends a placeholder, never a real key.
    expect(server.requests[0]?.headers.authorization).toBe("Bearer no-key");
  });

  it("promptCacheKey: true and maxTokensField override the defaults (and a server's 400 says why)", async () => {
    server.reply({ json: finalText });
    const provider = chat({ promptCacheKey: true, maxTokensField: "max_completion_tokens" });

    const error = await rejection(provider.complete(request({ prefixKey: "prefix-1" })));

    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "bad_request", retryable: false });
    expect((error as Error).message).toContain("Extra inputs are not permitted");
    expect(server.body(0)).toMatchObject({
      prompt_cache_key: "prefix-1",
      max_completion_tokens: 1024,
    });
  });

  it("extraBody is merged into every request body, streamed or not", async () => {
    server.reply(
      { json: finalText },
      { chunks: [chatChunk({ content: "ok" }, { finish: "stop" }), usageChunk(1, 1)] },
    );
    const provider = chat({
      extraBody: {
        parallel_tool_calls: false,
        tool_choice: "required",
        reasoning_effort: "low",
        top_k: 20,
      },
    });

    await provider.complete(request());
    await collect(streamOf(provider, request({ stream: true })));

    for (const index of [0, 1]) {
      expect(server.body(index)).toMatchObject({
        model: "compat-model",
        parallel_tool_calls: false,
        tool_choice: "required",
        reasoning_effort: "low",
        top_k: 20,
      });
    }
    expect(server.body(1).stream).toBe(true);
  });

  it("a call the model never named fails the run with a clear error instead of being dropped", async () => {
    server.reply({
      chunks: [
        chatChunk({
          tool_calls: [{ index: 0, id: "call_x", function: { arguments: '{"city":"Lisbon"}' } }],
        }),
        chatChunk({}, { finish: "tool_calls" }),
        usageChunk(10, 3),
      ],
    });
    const agent = new Agent({ provider: chat(), tools: [getWeather] });

    const events: RunEvent[] = [];
    for await (const event of agent.runStream("Weather?")) events.push(event);

    expect(handled).toEqual([]);
    expect(events.at(-1)).toMatchObject({
      result: {
        status: "failed",
        error: {
          code: "provider_failed",
          message: expect.stringContaining("without a function name"),
        },
      },
    });
  });

  it("arguments cut by the token limit fail with output_truncated naming maxTokens", async () => {
    server.reply({
      chunks: [
        chatChunk({
          tool_calls: [
            { index: 0, id: "call_1", function: { name: "get_weather", arguments: '{"ci' } },
          ],
        }),
        chatChunk({}, { finish: "length" }),
        usageChunk(10, 64),
      ],
    });
    const agent = new Agent({ provider: chat(), tools: [getWeather], config: { maxTokens: 64 } });

    const events: RunEvent[] = [];
    for await (const event of agent.runStream("Weather?")) events.push(event);

    expect(events.at(-1)).toMatchObject({
      result: {
        status: "failed",
        error: {
          code: "output_truncated",
          retryable: false,
          message: expect.stringContaining("maxTokens"),
        },
      },
    });
  });

  it("a text answer cut by the token limit completes with stopReason max_tokens", async () => {
    server.reply({ json: chatCompletion({ content: "Once upon a" }, "length") });
    const agent = new Agent({ provider: chat() });

    const result = await agent.run("Tell me a story");

    expect(result).toMatchObject({
      status: "completed",
      output: "Once upon a",
      stopReason: "max_tokens",
    });
  });
});
