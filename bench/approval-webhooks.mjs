// Issue 30: approval webhook delivery. A run parks on a call that asks a person; its notice is
// POSTed to a receiver on loopback. Latency: from the park (the request's `since`, the time the
// parked run was saved) to the receiver reading the request, one run at a time and for a burst
// of runs parking at once; median of `repetitions` runs of each. Outage: the receiver is down
// for `down-ms` while runs park, then back on the same port: every notice must arrive, and a
// receiver that dedupes by idempotency key must see each once. Memory and Redis side by side,
// default retry settings (first retry after 1 s, doubling) unless `--backoff-ms`.
//
//   npm run --silent bench:approval-webhooks      # builds first
//   node bench/approval-webhooks.mjs --runs=50 --burst=200 --repetitions=5 --outage-runs=100 --down-ms=10000
//
// Redis: REDIS_URL when set, else a private redis-server on a free port. JSON on stdout.
import { createServer } from "node:http";
import { cpus, loadavg } from "node:os";
import { Redis } from "ioredis";
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  memoryBackend,
  PermissionManager,
  redisBackend,
  tool,
} from "../dist/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../dist/testing.js";
import { deletePrefix, uniquePrefix } from "./lib/redis.mjs";
import { median, option, round, summarize } from "./lib/stats.mjs";
import { redisServer, redisVersion } from "./runtime/redis-server.mjs";

const RUNS = option("runs", 50);
const BURST = option("burst", 200);
const REPETITIONS = option("repetitions", 5);
const OUTAGE_RUNS = option("outage-runs", 100);
const DOWN_MS = option("down-ms", 10_000);
const OUTAGE_REPETITIONS = option("outage-repetitions", 1);
const BACKOFF_MS = option("backoff-ms", 1000);
const SECRET = "bench-webhook-secret-0123456789";

const log = (line) => process.stderr.write(`[bench:approval-webhooks] ${line}\n`);
const silent = pino({ level: "silent" });

function agent() {
  const remove = tool({
    name: "delete_file",
    description: "Delete a file.",
    input: z.object({ path: z.string() }),
    handler: async ({ path }) => `deleted ${path}`,
  });
  return new Agent({
    config: { name: "ops" },
    provider: new ScriptedProvider(
      [
        async (request) =>
          request.messages.at(-1)?.role === "tool"
            ? textResponse("done")
            : toolCallResponse([{ name: "delete_file", input: { path: "a.log" } }]),
      ],
      { loop: true },
    ),
    tools: [remove],
    permissions: new PermissionManager({
      default: "allow",
      rules: [{ tool: "delete_*", decision: "ask" }],
    }),
    logger: silent,
  });
}

/** A loopback receiver: arrival time and count by idempotency key; stop and start again. */
async function receiver() {
  const arrivals = new Map(); // key → { first, since, count }
  let waiter;
  const sockets = new Set();
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const at = Date.now();
      const key = request.headers["idempotency-key"];
      const known = arrivals.get(key);
      if (known) known.count += 1;
      else {
        const { since } = JSON.parse(Buffer.concat(chunks).toString());
        arrivals.set(key, { first: at, since, count: 1 });
      }
      response.writeHead(200).end();
      waiter?.();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const listen = (port) =>
    new Promise((resolve) =>
      server.listen(port, "127.0.0.1", () => resolve(server.address().port)),
    );
  const port = await listen(0);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    async until(count) {
      while (arrivals.size < count) await new Promise((resolve) => (waiter = resolve));
    },
    async stop() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    start: () => listen(port),
  };
}

async function withRuntime(kind, url, hook, body) {
  const prefix = uniquePrefix("webhooks");
  const backend = kind === "redis" ? redisBackend({ url, prefix }) : memoryBackend();
  const runtime = new AgentRuntime({
    agents: [agent()],
    backend,
    logger: pino({ level: "error" }, pino.destination(2)),
    approvalWebhook: { url: hook.url, secret: SECRET, backoffMs: BACKOFF_MS },
  });
  await runtime.start();
  try {
    return await body(runtime);
  } finally {
    await runtime.close({ timeoutMs: 5000 });
    if (kind === "redis") {
      const client = new Redis(url, { maxRetriesPerRequest: null });
      await deletePrefix(client, prefix);
      client.disconnect();
    }
  }
}

/** Latencies (ms) park → receiver of `count` runs, `width` parking at once. */
async function latencies(kind, url, count, width) {
  const hook = await receiver();
  try {
    return await withRuntime(kind, url, hook, async (runtime) => {
      for (let start = 0; start < count; start += width) {
        const handles = await Promise.all(
          Array.from({ length: Math.min(width, count - start) }, () => runtime.submit("ops", "go")),
        );
        await Promise.all(handles.map((handle) => handle.result()));
        await hook.until(start + handles.length);
      }
      return [...hook.arrivals.values()].map((each) => each.first - each.since);
    });
  } finally {
    await hook.stop();
  }
}

/** The receiver down for DOWN_MS while OUTAGE_RUNS park, then back. */
async function outage(kind, url) {
  const hook = await receiver();
  await hook.stop();
  try {
    return await withRuntime(kind, url, hook, async (runtime) => {
      const handles = await Promise.all(
        Array.from({ length: OUTAGE_RUNS }, () => runtime.submit("ops", "go")),
      );
      await Promise.all(handles.map((handle) => handle.result()));
      const parkedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
      await hook.start();
      const backAt = Date.now();
      await hook.until(OUTAGE_RUNS);
      const allAt = Date.now();
      const expected = new Set(handles.map((handle) => `${handle.runId}:call_1`));
      const counts = [...hook.arrivals.values()].map((each) => each.count);
      return {
        runs: OUTAGE_RUNS,
        downMs: DOWN_MS,
        delivered: [...expected].filter((key) => hook.arrivals.has(key)).length,
        unexpectedKeys: [...hook.arrivals.keys()].filter((key) => !expected.has(key)).length,
        // A receiver that dedupes by key acts once per key; these arrived more than once.
        repeatedDeliveries: counts.filter((count) => count > 1).length,
        dedupedActions: hook.arrivals.size,
        backToAllDeliveredMs: allAt - backAt,
        parkToAllDeliveredMs: allAt - parkedAt,
      };
    });
  } finally {
    await hook.stop().catch(() => {});
  }
}

async function main() {
  const loadAtStart = loadavg()[0];
  const redis = await redisServer();
  const probe = new Redis(redis.url, { maxRetriesPerRequest: null });
  const version = await redisVersion(probe);
  probe.disconnect();
  const result = {
    bench: "approval-webhooks",
    settings: {
      runs: RUNS,
      burst: BURST,
      repetitions: REPETITIONS,
      outageRuns: OUTAGE_RUNS,
      downMs: DOWN_MS,
      backoffMs: BACKOFF_MS,
    },
    host: { cpus: cpus().length, loadAtStart: round(loadAtStart), redis: version },
    latency: {},
    outage: {},
  };
  try {
    for (const kind of ["memory", "redis"]) {
      log(`${kind}: warm-up`);
      await latencies(kind, redis.url, 10, 1);
      const one = [];
      const burst = [];
      for (let repetition = 1; repetition <= REPETITIONS; repetition += 1) {
        log(`${kind}: latency ${repetition}/${REPETITIONS}`);
        one.push(summarize(await latencies(kind, redis.url, RUNS, 1)));
        burst.push(summarize(await latencies(kind, redis.url, BURST, BURST)));
      }
      const medianOf = (summaries) => ({
        p50: round(median(summaries.map((each) => each.p50))),
        p99: round(median(summaries.map((each) => each.p99))),
        p50s: summaries.map((each) => each.p50),
        p99s: summaries.map((each) => each.p99),
      });
      result.latency[kind] = { oneAtATime: medianOf(one), burst: medianOf(burst) };
      const outages = [];
      for (let repetition = 1; repetition <= OUTAGE_REPETITIONS; repetition += 1) {
        log(`${kind}: receiver down ${DOWN_MS} ms (${repetition}/${OUTAGE_REPETITIONS})`);
        outages.push(await outage(kind, redis.url));
      }
      result.outage[kind] = outages.length === 1 ? outages[0] : outages;
    }
    result.host.loadAtEnd = round(loadavg()[0]);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await redis.stop();
  }
}

await main();
