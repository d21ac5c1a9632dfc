// Issue 9: the per-call overhead of the provider adapters (request building and response mapping,
// SDK included) next to calling the same SDK directly, with the same fake fetch answering at once
// with a recorded body, in one process. Prints one JSON document to stdout; progress to stderr.
// Run with `npm run --silent bench:providers` (it builds first). See bench/README.md.
//
// Options: --rounds=<n> alternating rounds per case (40), --chunk=<n> calls per side per round (50),
// --warmup=<n> untimed calls per side first (500).
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, loadavg } from "node:os";
import Anthropic from "@anthropic-ai/sdk";
import { anthropicProvider, openaiProvider } from "harnessx";
import OpenAI from "openai";
import { median, option, round } from "./lib/stats.mjs";

const ROUNDS = option("rounds", 40);
const CHUNK = option("chunk", 50);
const WARMUP = option("warmup", 500);
// The local-HTTP cases (issue 28): a 2 KB streamed answer with two tool calls, median of 5 rounds.
const HTTP_ROUNDS = option("http-rounds", 5);
const HTTP_WARMUP = option("http-warmup", 100);
const HTTP_TARGET_RATIO = 1.1;
const TARGET_RATIO = 1.2;
const log = (line) => process.stderr.write(`[bench:providers] ${line}\n`);
const loadAtStart = loadavg()[0];

const fixture = (name) =>
  readFileSync(new URL(`../test/fixtures/providers/${name}`, import.meta.url), "utf8");

// A fetch that answers at once with one recorded body; the same one serves adapter and SDK.
const answering = (body, contentType) => {
  const headers = { "content-type": contentType };
  return async () => new Response(body, { status: 200, headers });
};
const jsonFetch = (name) => answering(fixture(name), "application/json");
const sseFetch = (name) => answering(fixture(name), "text/event-stream");

const tools = [
  {
    name: "get_weather",
    description: "Current weather for a city.",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];
const request = (stream) => ({
  system: "You are a travel assistant.",
  messages: [
    { role: "user", content: [{ type: "text", text: "Weather in Lisbon?" }] },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Lisbon" } }],
    },
    {
      role: "tool",
      content: [{ type: "tool_result", toolCallId: "call_1", content: "sunny", isError: false }],
    },
    { role: "user", content: [{ type: "text", text: "And Porto?" }] },
  ],
  tools,
  model: "default",
  maxTokens: 1024,
  temperature: 1,
  stream,
  prefixKey: "0123456789abcdef0123456789abcdef",
});

// The same requests, written by hand in each API's own shape: what a caller of the SDK sends.
const openaiResponsesParams = {
  model: "gpt-5-mini",
  instructions: "You are a travel assistant.",
  input: [
    { role: "user", content: "Weather in Lisbon?" },
    {
      type: "function_call",
      call_id: "call_1",
      name: "get_weather",
      arguments: '{"city":"Lisbon"}',
    },
    { type: "function_call_output", call_id: "call_1", output: "sunny" },
    { role: "user", content: "And Porto?" },
  ],
  tools: tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema,
    strict: false,
  })),
  max_output_tokens: 1024,
  prompt_cache_key: "0123456789abcdef0123456789abcdef",
};
const openaiChatParams = {
  model: "gpt-5-mini",
  messages: [
    { role: "system", content: "You are a travel assistant." },
    { role: "user", content: "Weather in Lisbon?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Lisbon"}' },
        },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: "sunny" },
    { role: "user", content: "And Porto?" },
  ],
  tools: tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  })),
  max_completion_tokens: 1024,
  prompt_cache_key: "0123456789abcdef0123456789abcdef",
};
const anthropicParams = {
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  system: [
    { type: "text", text: "You are a travel assistant.", cache_control: { type: "ephemeral" } },
  ],
  messages: [
    { role: "user", content: [{ type: "text", text: "Weather in Lisbon?" }] },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Lisbon" } }],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_1", content: "sunny" },
        { type: "text", text: "And Porto?" },
      ],
    },
  ],
  tools: tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
    cache_control: { type: "ephemeral" },
  })),
};

const drain = async (stream) => {
  let count = 0;
  for await (const _event of stream) count += 1;
  return count;
};

const openaiClient = (fetch) => new OpenAI({ apiKey: "sk-bench-0000000000", fetch, maxRetries: 0 });
const anthropicClient = (fetch) =>
  new Anthropic({ apiKey: "sk-ant-bench-0000000000", fetch, maxRetries: 0 });

function pair(name, fetch, adapterOf, direct) {
  return { name, adapter: adapterOf(fetch), direct: direct(fetch) };
}

const cases = [
  pair(
    "openai responses complete",
    jsonFetch("openai-responses-tool-calls.json"),
    (fetch) => {
      const provider = openaiProvider({ model: "gpt-5-mini", client: openaiClient(fetch) });
      return () => provider.complete(request(false));
    },
    (fetch) => {
      const client = openaiClient(fetch);
      return () => client.responses.create(openaiResponsesParams);
    },
  ),
  pair(
    "openai responses stream",
    sseFetch("openai-responses-stream-tool-call.sse"),
    (fetch) => {
      const provider = openaiProvider({ model: "gpt-5-mini", client: openaiClient(fetch) });
      return () => drain(provider.stream(request(true)));
    },
    (fetch) => {
      const client = openaiClient(fetch);
      return async () =>
        drain(await client.responses.create({ ...openaiResponsesParams, stream: true }));
    },
  ),
  pair(
    "openai chat complete",
    jsonFetch("openai-chat-tool-calls.json"),
    (fetch) => {
      const provider = openaiProvider({
        model: "gpt-5-mini",
        client: openaiClient(fetch),
        api: "chat",
      });
      return () => provider.complete(request(false));
    },
    (fetch) => {
      const client = openaiClient(fetch);
      return () => client.chat.completions.create(openaiChatParams);
    },
  ),
  pair(
    "openai chat stream",
    sseFetch("openai-chat-stream-tool-calls.sse"),
    (fetch) => {
      const provider = openaiProvider({
        model: "gpt-5-mini",
        client: openaiClient(fetch),
        api: "chat",
      });
      return () => drain(provider.stream(request(true)));
    },
    (fetch) => {
      const client = openaiClient(fetch);
      return async () =>
        drain(
          await client.chat.completions.create({
            ...openaiChatParams,
            stream: true,
            stream_options: { include_usage: true },
          }),
        );
    },
  ),
  pair(
    "anthropic complete",
    jsonFetch("anthropic-message-tool-use.json"),
    (fetch) => {
      const provider = anthropicProvider({
        model: "claude-sonnet-4-5",
        client: anthropicClient(fetch),
      });
      return () => provider.complete(request(false));
    },
    (fetch) => {
      const client = anthropicClient(fetch);
      return () => client.messages.create(anthropicParams);
    },
  ),
  pair(
    "anthropic stream",
    sseFetch("anthropic-stream-tool-use.sse"),
    (fetch) => {
      const provider = anthropicProvider({
        model: "claude-sonnet-4-5",
        client: anthropicClient(fetch),
      });
      return () => drain(provider.stream(request(true)));
    },
    (fetch) => {
      const client = anthropicClient(fetch);
      return async () => drain(await client.messages.create({ ...anthropicParams, stream: true }));
    },
  ),
];

// A real local HTTP server answering every request with one streamed body, as a compatible
// server would: the adapter and the bare SDK read the same bytes over the same kind of socket.
const ANSWER =
  "The weather in Lisbon is sunny and warm, with a light breeze from the west. ".repeat(27);
const sse = (events) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("");
const named = (events) =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
const slices = (text, size) => {
  const parts = [];
  for (let at = 0; at < text.length; at += size) parts.push(text.slice(at, at + size));
  return parts;
};
const chatChunk = (delta, finish = null, usage = undefined) => ({
  id: "chatcmpl-bench",
  object: "chat.completion.chunk",
  created: 1756315700,
  model: "bench-model",
  choices: usage === undefined ? [{ index: 0, delta, finish_reason: finish }] : [],
  ...(usage === undefined ? {} : { usage }),
});
const callChunks = (index, id, city) => [
  chatChunk({
    tool_calls: [{ index, id, type: "function", function: { name: "get_weather", arguments: "" } }],
  }),
  ...slices(JSON.stringify({ city, unit: "celsius" }), 8).map((part) =>
    chatChunk({ tool_calls: [{ index, function: { arguments: part } }] }),
  ),
];
const chatBody = `${sse([
  chatChunk({ role: "assistant", content: "" }),
  ...slices(ANSWER, 48).map((part) => chatChunk({ content: part })),
  ...callChunks(0, "call_a", "Lisbon"),
  ...callChunks(1, "call_b", "Porto"),
  chatChunk({}, "tool_calls"),
  chatChunk({}, null, { prompt_tokens: 900, completion_tokens: 600, total_tokens: 1500 }),
])}data: [DONE]\n\n`;
const anthropicUsage = {
  input_tokens: 900,
  output_tokens: 1,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
};
const toolBlock = (index, id, city) => [
  {
    type: "content_block_start",
    index,
    content_block: { type: "tool_use", id, name: "get_weather", input: {} },
  },
  ...slices(JSON.stringify({ city, unit: "celsius" }), 8).map((part) => ({
    type: "content_block_delta",
    index,
    delta: { type: "input_json_delta", partial_json: part },
  })),
  { type: "content_block_stop", index },
];
const anthropicBody = named([
  {
    type: "message_start",
    message: {
      id: "msg_bench",
      type: "message",
      role: "assistant",
      model: "claude-bench",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsage,
    },
  },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  ...slices(ANSWER, 48).map((part) => ({
    type: "content_block_delta",
    index: 0,
    delta: { type: "text_delta", text: part },
  })),
  { type: "content_block_stop", index: 0 },
  ...toolBlock(1, "toolu_a", "Lisbon"),
  ...toolBlock(2, "toolu_b", "Porto"),
  {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 600 },
  },
  { type: "message_stop" },
]);
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.end(request.url?.includes("/messages") ? anthropicBody : chatBody);
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${server.address().port}`;

const httpCases = [
  {
    name: "openai chat stream over local HTTP (2 KB answer, two tool calls)",
    adapter: (() => {
      const provider = openaiProvider({
        model: "bench-model",
        api: "chat",
        baseURL: `${base}/v1`,
        apiKey: "sk-bench-0000000000",
        maxRetries: 0,
      });
      return () => drain(provider.stream(request(true)));
    })(),
    direct: (() => {
      const client = new OpenAI({
        apiKey: "sk-bench-0000000000",
        baseURL: `${base}/v1`,
        maxRetries: 0,
      });
      const { prompt_cache_key: _key, max_completion_tokens: _max, ...params } = openaiChatParams;
      return async () =>
        drain(
          await client.chat.completions.create({
            ...params,
            model: "bench-model",
            max_tokens: 1024,
            stream: true,
            stream_options: { include_usage: true },
          }),
        );
    })(),
  },
  {
    name: "anthropic stream over local HTTP (2 KB answer, two tool calls)",
    adapter: (() => {
      const provider = anthropicProvider({
        model: "claude-bench",
        baseURL: base,
        apiKey: "sk-ant-bench-0000000000",
        maxRetries: 0,
      });
      return () => drain(provider.stream(request(true)));
    })(),
    direct: (() => {
      const client = new Anthropic({
        apiKey: "sk-ant-bench-0000000000",
        baseURL: base,
        maxRetries: 0,
      });
      return async () =>
        drain(
          await client.messages.create({ ...anthropicParams, model: "claude-bench", stream: true }),
        );
    })(),
  },
];

// Wall time, and this process's CPU time (user + system: the in-process server's share is the
// same for both sides), which the other processes of a loaded machine disturb far less.
const batch = async (call, calls) => {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < calls; index += 1) await call();
  const used = process.cpuUsage(cpu);
  return {
    wall: ((performance.now() - started) * 1000) / calls,
    cpu: (used.user + used.system) / calls,
  };
};

/**
 * Each case's adapter against its SDK called directly: warm-up, then short alternating rounds
 * (each side first in turn) so load on the machine hits both alike; the ratio is the median of
 * the rounds' ratios.
 */
async function compare(list, { warmup, rounds, target, digits }) {
  const compared = [];
  for (const each of list) {
    log(`${each.name}: warming up`);
    await batch(each.adapter, warmup);
    await batch(each.direct, warmup);
    const adapter = [];
    const direct = [];
    for (let index = 0; index < rounds; index += 1) {
      if (index % 2 === 0) {
        adapter.push(await batch(each.adapter, CHUNK));
        direct.push(await batch(each.direct, CHUNK));
      } else {
        direct.push(await batch(each.direct, CHUNK));
        adapter.push(await batch(each.adapter, CHUNK));
      }
    }
    const medianOf = (side, measure) => median(side.map((each) => each[measure]));
    const ratioOf = (measure) =>
      median(adapter.map((value, index) => value[measure] / direct[index][measure]));
    const ratio = ratioOf("wall");
    const result = {
      case: each.name,
      adapterUsPerCall: round(medianOf(adapter, "wall"), digits),
      sdkDirectUsPerCall: round(medianOf(direct, "wall"), digits),
      overheadUsPerCall: round(medianOf(adapter, "wall") - medianOf(direct, "wall"), digits),
      ratio: round(ratio, 3),
      withinTarget: ratio <= target,
      adapterCpuUsPerCall: round(medianOf(adapter, "cpu"), digits),
      sdkDirectCpuUsPerCall: round(medianOf(direct, "cpu"), digits),
      cpuRatio: round(ratioOf("cpu"), 3),
    };
    log(JSON.stringify(result));
    compared.push(result);
  }
  return compared;
}

const results = await compare(cases, {
  warmup: WARMUP,
  rounds: ROUNDS,
  target: TARGET_RATIO,
  digits: 1,
});
const httpResults = await compare(httpCases, {
  warmup: HTTP_WARMUP,
  rounds: HTTP_ROUNDS,
  target: HTTP_TARGET_RATIO,
  digits: 2,
});
server.close();

process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: "providers",
      what: "µs per call: adapter (request building + SDK + response mapping) vs the SDK called directly, same fake fetch",
      targetRatio: TARGET_RATIO,
      rounds: ROUNDS,
      callsPerRound: CHUNK,
      node: process.version,
      cpus: cpus().length,
      loadAverage: { start: round(loadAtStart, 2), end: round(loadavg()[0], 2) },
      results,
      localHttp: {
        what: "µs per call over a real local HTTP server: a 2 KB streamed answer with two tool calls, adapter (parse + map) vs the bare SDK reading the same stream; median of the rounds",
        targetRatio: HTTP_TARGET_RATIO,
        rounds: HTTP_ROUNDS,
        callsPerRound: CHUNK,
        results: httpResults,
      },
    },
    null,
    2,
  )}\n`,
);
