// What encoding and decoding a durable run's stored data costs the worker, per save and per
// load, without Redis: the codec work `saveRun` does on every save (summary, its short form,
// the new messages' JSON, the record document, the dispatch view, the checkpoint) and the work
// `acquireLease` / `loadRun` do on every load (the stored summary decoded, the record joined and
// parsed, the dispatch view).
//
//   node bench/codec.mjs
//   CODEC_DIST=/path/to/other/dist node bench/codec.mjs   (the same bench on another build)
//   CODEC_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/codec.mjs
//
// The records are the real ones: runs of the benchmark agent (provider → tool → provider,
// repeated `turns` times) on the memory backend, every record a save was given captured. Prints
// one JSON document: per conversation length, µs and bytes allocated per save-encode and per
// load-decode (means over the run's saves), and a digest of every stored byte (so two builds
// can be shown to store the same bytes). Bytes are measured with a young generation large
// enough that no GC runs while they are counted (the process restarts itself with the flags).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { getHeapSpaceStatistics } from "node:v8";

// CODEC_NODE_FLAGS: more flags for the measuring process (e.g. "--cpu-prof --cpu-prof-dir=…").
const FLAGS = [
  "--expose-gc",
  "--min-semi-space-size=256",
  "--max-semi-space-size=256",
  ...(process.env.CODEC_NODE_FLAGS?.split(" ").filter(Boolean) ?? []),
];
if (typeof globalThis.gc !== "function") {
  const child = spawnSync(
    process.execPath,
    [...FLAGS, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: "inherit" },
  );
  process.exit(child.status ?? 1);
}

const dist = process.env.CODEC_DIST ?? fileURLToPath(new URL("../dist", import.meta.url));
const load = (path) => import(pathToFileURL(`${dist}/${path}`).href);
const [
  { AgentRuntime, memoryBackend, Agent, tool },
  { textResponse, toolCallResponse },
  { recordDocument },
  { joinRecord },
  { conversationOf },
  { summarize },
  { encodeSummary, decodeSummary },
  { checkpointOf },
  { encodeCheckpoint },
  { contextView },
  { indexFields },
] = await Promise.all([
  load("index.js"),
  load("testing.js"),
  load("store/record/encode.js"),
  load("store/record/decode.js"),
  load("store/conversation.js"),
  load("store/summary.js"),
  load("store/record/summary-codec.js"),
  load("store/checkpoint.js"),
  load("store/record/checkpoint-codec.js"),
  load("store/run-view.js"),
  load("runtime/redis-index-lua.js"),
]);
const { pino } = await import("pino");
const { z } = await import("zod");

const TURNS = [1, 5, 20];

// ---------------------------------------------------------------------------------------------
// The records a run's saves are given

/** A model that asks for one no-op call per turn until `turns` results are in, then answers. */
const turnsModel = (turns) => ({
  name: "bench-turns",
  async complete(request) {
    const results = request.messages.filter((message) => message.role === "tool").length;
    if (results >= turns) return textResponse("done");
    return toolCallResponse([
      { name: "noop", input: { query: "harnessx" }, id: `call_${results + 1}` },
    ]);
  },
});

/** Every save of one run of `turns` tool turns: { record, storedMessages, raw }. */
async function captureRun(turns) {
  const backend = memoryBackend();
  const saves = [];
  const save = backend.saveRun.bind(backend);
  const submit = backend.submitRun.bind(backend);
  let created;
  backend.submitRun = (record, options) => {
    created = record;
    return submit(record, options);
  };
  backend.saveRun = (runId, token, record, options = {}) => {
    const { storedMessages } = options;
    const raw = options.checkpoint?.raw;
    saves.push({
      record,
      storedMessages: storedMessages ?? 0,
      // The handlers' raw outcomes the step handed over (the bench's tool answers "ok").
      raw:
        raw === undefined
          ? undefined
          : Object.fromEntries(
              Object.keys(raw).map((id) => [id, { toolCallId: id, content: "ok", isError: false }]),
            ),
    });
    return save(runId, token, record, options);
  };
  const noop = tool({
    name: "noop",
    description: "Does nothing and answers ok.",
    input: z.object({ query: z.string() }),
    handler: async () => "ok",
  });
  const agent = new Agent({
    provider: turnsModel(turns),
    config: { name: "bench", maxIterations: turns + 5 },
    tools: [noop],
    logger: pino({ level: "silent" }),
  });
  const runtime = new AgentRuntime({ agents: [agent], backend, logger: pino({ level: "silent" }) });
  await runtime.start();
  const result = await (await runtime.submit("bench", "Run the benchmark.")).result();
  await runtime.close({ timeoutMs: 5_000 });
  if (result.status !== "completed" || result.messages.length !== 2 + 2 * turns) {
    throw new Error(`unexpected run: ${JSON.stringify(result).slice(0, 300)}`);
  }
  return normalized(created, saves);
}

/**
 * The captured records with fixed ids and times (so that two builds store the same bytes and
 * the digest can say so), as JSON data (as a store holds them: no keys holding undefined).
 */
function normalized(created, saves) {
  const ids = [
    [created.runId, "run-1"],
    [created.sessionId, "session-1"],
  ];
  const fix = (record, at) => {
    let json = JSON.stringify(record);
    for (const [id, fixed] of ids) json = json.split(id).join(fixed);
    const value = JSON.parse(json);
    value.createdAt = 1_764_748_800_000;
    value.updatedAt = value.createdAt + 1_000 * at;
    const context = value.snapshot?.context;
    if (typeof context?.responseMs === "number") context.responseMs = 250;
    return value;
  };
  return {
    created: fix(created, 0),
    saves: saves.map((save, at) => ({ ...save, record: fix(save.record, at + 1) })),
  };
}

// ---------------------------------------------------------------------------------------------
// The codec work of one save and one load, as the Redis backend and the step worker do it

/** A record as the step builds it for each save: a fresh context (no cached view). */
const fresh = (record) =>
  record.snapshot === null
    ? record
    : { ...record, snapshot: { ...record.snapshot, context: { ...record.snapshot.context } } };

/** `saveRun`'s codec work (and `checkpointOf`, which the step calls for it). */
function encodeSave({ record, storedMessages, raw }) {
  const checkpoint = checkpointOf(record, storedMessages, raw);
  const summary = summarize(record);
  const summaryJson = encodeSummary(summary);
  const head = indexFields(summary);
  const messages = conversationOf(record)
    .slice(storedMessages)
    .map((message) => JSON.stringify(message));
  const document = recordDocument(record, summary);
  const dispatch = record.phase === "dispatch" ? contextView(record)?.iteration : undefined;
  return {
    document,
    summaryJson,
    head,
    messages,
    checkpoint: encodeCheckpoint(checkpoint),
    dispatch,
  };
}

/** `acquireLease`'s / `loadRun`'s codec work on a stored state. */
function decodeLoad({ runId, document, messages, summaryJson }) {
  const summary = decodeSummary(runId, summaryJson, "A stored run summary");
  const record = joinRecord(document, messages, summary);
  if (record.phase === "dispatch") contextView(record);
  return record;
}

/** What Redis holds after each save: the document, the whole conversation, the summary. */
function storedStates(created, saves) {
  // The submit stored the input's messages.
  const conversation = conversationOf(created).map((message) => JSON.stringify(message));
  const digest = createHash("sha256");
  const states = saves.map((save) => {
    const encoded = encodeSave({ ...save, record: fresh(save.record) });
    conversation.push(...encoded.messages);
    for (const part of [
      encoded.document,
      encoded.summaryJson,
      ...encoded.head,
      encoded.checkpoint,
    ]) {
      digest.update(part).update("\0");
    }
    return {
      runId: save.record.runId,
      document: encoded.document,
      messages: [...conversation],
      summaryJson: encoded.summaryJson,
    };
  });
  // Every state loads back as the record saved (what a worker relies on).
  for (const [at, state] of states.entries()) {
    const loaded = decodeLoad(state);
    // (as JSON: the machine's snapshot has keys holding undefined, which no store keeps)
    if (!isDeepStrictEqual(loaded, JSON.parse(JSON.stringify(saves[at].record)))) {
      throw new Error(
        `save ${at} does not load back as saved:\n${JSON.stringify(loaded)}\n${JSON.stringify(saves[at].record)}`,
      );
    }
  }
  return {
    states,
    digest: digest.digest("hex").slice(0, 16),
    documentBytes: states.map((state) => state.document.length),
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring

let gcs = 0;
new PerformanceObserver((list) => {
  gcs += list.getEntries().length;
}).observe({ entryTypes: ["gc"] });
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/**
 * Bytes in the young generation: where every object is allocated (the old spaces also take code
 * and feedback the JIT makes while the loop runs, which are not the workload's).
 */
const youngBytes = () =>
  getHeapSpaceStatistics()
    .filter(
      (space) => space.space_name === "new_space" || space.space_name === "new_large_object_space",
    )
    .reduce((sum, space) => sum + space.space_used_size, 0);

/** Mean bytes allocated per call of `work(item)` over `items`, with no GC while counting. */
async function bytesPer(items, work, rounds = 50) {
  for (let round = 0; round < 5; round++) for (const item of items) work(item);
  globalThis.gc();
  await settle();
  const gcsBefore = gcs;
  const before = youngBytes();
  for (let round = 0; round < rounds; round++) for (const item of items) work(item);
  const after = youngBytes();
  await settle();
  if (gcs !== gcsBefore) return null; // a GC ran: the count would be wrong
  return Math.round((after - before) / (rounds * items.length));
}

/**
 * Median over 5 batches of the mean µs of CPU (this process's user + system time, so that time
 * the shared machine gives other processes is not counted) per call of `work(item)` over `items`.
 */
function microsPer(items, work, rounds) {
  for (let round = 0; round < Math.ceil(rounds / 4); round++) for (const item of items) work(item);
  const batches = [];
  for (let batch = 0; batch < 5; batch++) {
    const begin = process.cpuUsage();
    for (let round = 0; round < rounds; round++) for (const item of items) work(item);
    const { user, system } = process.cpuUsage(begin);
    batches.push((user + system) / (rounds * items.length));
  }
  batches.sort((a, b) => a - b);
  return Math.round(batches[2] * 100) / 100;
}

const OPS_PER_BATCH = 20_000;
const runs = [];
for (const turns of TURNS) {
  const { created, saves } = await captureRun(turns);
  const { states, digest, documentBytes } = storedStates(created, saves);
  const call = (item) => item();
  runs.push({
    turns,
    saves,
    states,
    digest,
    documentBytes,
    // Each timed save gets a record with a fresh context, as a step's save does.
    saveItems: saves.map((save) => () => encodeSave({ ...save, record: fresh(save.record) })),
    freshItems: saves.map((save) => () => ({ ...save, record: fresh(save.record) })),
    loadItems: states.map((state) => () => decodeLoad(state)),
    call,
  });
}
// Warm every path up before measuring any.
for (const run of runs) {
  microsPer(run.saveItems, run.call, 200);
  microsPer(run.loadItems, run.call, 200);
}
const results = [];
for (const run of runs) {
  const { call } = run;
  const rounds = Math.max(1, Math.round(OPS_PER_BATCH / run.saveItems.length / 5));
  const freshBytes = await bytesPer(run.freshItems, call);
  const saveBytes = await bytesPer(run.saveItems, call);
  const freshUs = microsPer(run.freshItems, call, rounds);
  results.push({
    turns: run.turns,
    messages: 2 + 2 * run.turns,
    saves: run.saves.length,
    documentBytes: run.documentBytes.reduce((sum, bytes) => sum + bytes, 0),
    storedDigest: run.digest,
    // Per save: the record's fresh context (the bench's own cost) taken off.
    save: {
      us: Math.round((microsPer(run.saveItems, call, rounds) - freshUs) * 100) / 100,
      bytes: saveBytes === null || freshBytes === null ? null : saveBytes - freshBytes,
    },
    load: {
      us: microsPer(run.loadItems, call, rounds),
      bytes: await bytesPer(run.loadItems, call),
    },
  });
}
console.log(JSON.stringify({ dist, node: process.version, results }, null, 2));
