// Issue 8: what `runtime.list()` costs on Redis as the runs stored grow. The same queries, a page
// of 50 each, against 1,000 runs and against 100,000 runs stored (two prefixes of one Redis),
// measured alternately so that drift falls on both alike. Prints one JSON document to stdout.
//
//   npm run --silent bench:list            # builds first
//   node bench/list.mjs --large=100000 --small=1000 --samples=1000
//
// Redis: REDIS_URL when set, else a private redis-server on a free port (no persistence).
import { cpus, loadavg } from "node:os";
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../dist/index.js";
import { deletePrefix, option, round, summarize, uniquePrefix } from "./runtime/common.mjs";
import { redisServer, redisVersion } from "./runtime/redis-server.mjs";

const SMALL = option("small", 1000);
const LARGE = option("large", 100_000);
const SAMPLES = option("samples", 1000);
const LIMIT = 50;
/** createRun calls in flight while writing runs (auto-pipelined by the backend's client). */
const WRITE_WIDTH = 2000;
const TARGET_RATIO = 2;

const log = (line) => process.stderr.write(`[bench:list] ${line}\n`);
const AGENTS = ["support", "billing", "ops", "search"];
const STATUSES = [
  ...Array(12).fill("completed"),
  ...Array(3).fill("failed"),
  "cancelled",
  ...Array(2).fill("awaiting_approval"),
  "running",
  "queued",
];

async function main() {
  const loadAtStart = loadavg()[0];
  const redis = await redisServer();
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  const stores = [];
  try {
    for (const runs of [SMALL, LARGE]) stores.push(await storeWith(redis.url, runs));
    const queries = {
      firstPage: () => ({}),
      middlePage: (store) => ({ cursor: store.middleCursor }),
      byStatus: () => ({ status: "completed" }),
      byAgent: () => ({ agent: "support" }),
      byAgentAndStatus: () => ({ agent: "billing", status: "failed" }),
      bySession: (store) => ({ sessionId: store.sessionId }),
    };
    const results = {};
    for (const [name, build] of Object.entries(queries)) {
      const timings = stores.map(() => []);
      for (let sample = 0; sample < SAMPLES + 20; sample += 1) {
        for (const [at, store] of stores.entries()) {
          const options = { limit: LIMIT, ...build(store) };
          const began = performance.now();
          const page = await store.runtime.list(options);
          const elapsed = performance.now() - began;
          if (page.runs.length === 0) throw new Error(`${name}: an empty page`);
          if (sample >= 20) timings[at].push(elapsed); // the first 20 warm up
        }
      }
      const [small, large] = timings.map(summarize);
      results[name] = {
        [`runs${SMALL}`]: small,
        [`runs${LARGE}`]: large,
        p50Ratio: round(large.p50 / small.p50),
        p99Ratio: round(large.p99 / small.p99),
      };
      log(`${name}: p50 ${small.p50} → ${large.p50} ms, p99 ${small.p99} → ${large.p99} ms`);
    }
    const worst = Math.max(...Object.values(results).map((each) => each.p50Ratio));
    const worstP99 = Math.max(...Object.values(results).map((each) => each.p99Ratio));
    const output = {
      benchmark: "list",
      node: process.version,
      redis: await redisVersion(client),
      cpus: cpus().length,
      loadAverage1m: { atStart: round(loadAtStart), atEnd: round(loadavg()[0]) },
      pageSize: LIMIT,
      samples: SAMPLES,
      stored: Object.fromEntries(
        stores.map((store) => [
          `runs${store.runs}`,
          { writeSeconds: store.writeSeconds, runsPerSecond: store.runsPerSecond },
        ]),
      ),
      queries: results,
      target: { largeOverSmallAtMost: TARGET_RATIO },
      worstP50Ratio: worst,
      worstP99Ratio: worstP99,
      met: worst <= TARGET_RATIO && worstP99 <= TARGET_RATIO,
    };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  } finally {
    for (const store of stores) {
      await store.runtime.close({ timeoutMs: 1000 });
      await deletePrefix(client, store.prefix);
    }
    client.disconnect();
    await redis.stop();
  }
}

/** A runtime (no workers) on a fresh prefix holding `runs` runs, written in bulk. */
async function storeWith(url, runs) {
  const prefix = uniquePrefix("list");
  const backend = redisBackend({ url, prefix });
  const runtime = new AgentRuntime({ agents: [], backend, logger: pino({ level: "silent" }) });
  await runtime.start({ workers: false });
  const base = Date.now() - runs * 10;
  const began = performance.now();
  for (let start = 0; start < runs; start += WRITE_WIDTH) {
    const batch = [];
    for (let index = start; index < Math.min(runs, start + WRITE_WIDTH); index += 1) {
      batch.push(backend.createRun(record(index, base)));
    }
    const created = await Promise.all(batch);
    if (created.includes(false)) throw new Error("a run id was written twice");
  }
  const writeSeconds = (performance.now() - began) / 1000;
  log(`${runs} runs written in ${round(writeSeconds)} s`);
  // A cursor halfway down the newest-first order: the page after it is a deep one.
  let middleCursor = null;
  for (let skipped = 0; skipped < runs / 2; skipped += 500) {
    const page = await runtime.list({
      limit: 500,
      ...(middleCursor ? { cursor: middleCursor } : {}),
    });
    middleCursor = page.nextCursor;
  }
  return {
    runs,
    prefix,
    runtime,
    middleCursor,
    sessionId: `session-${Math.floor(runs / 2 / 10)}`,
    writeSeconds: round(writeSeconds),
    runsPerSecond: Math.round(runs / writeSeconds),
  };
}

/** Run `index`: ten runs per session, agents and statuses spread as a busy installation's. */
function record(index, base) {
  const runId = `run-${String(index).padStart(7, "0")}`;
  const sessionId = `session-${Math.floor(index / 10)}`;
  const status = STATUSES[index % STATUSES.length];
  const createdAt = base + index * 10;
  const messages = [{ role: "user", content: [{ type: "text", text: `question ${index}` }] }];
  const finished = ["completed", "failed", "cancelled"].includes(status);
  return {
    schemaVersion: 2,
    runId,
    sessionId,
    agent: AGENTS[index % AGENTS.length],
    status,
    phase: finished ? "done" : "compose",
    input: { messages, text: `question ${index}`, maxIterations: 10 },
    snapshot: null,
    result: finished
      ? {
          runId,
          sessionId,
          status,
          output: status === "completed" ? `answer ${index}` : null,
          error: status === "failed" ? { name: "ProviderError", message: "down" } : null,
          pending: [],
          usage: { inputTokens: 120, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 },
          iterations: 2,
          messages: [
            ...messages,
            { role: "assistant", content: [{ type: "text", text: `answer ${index}` }] },
          ],
        }
      : null,
    createdAt,
    updatedAt: createdAt + 5,
  };
}

/** REDIS_URL's server, or a private redis-server on a free port, stopped at the end. */

await main();
