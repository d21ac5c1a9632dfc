// Issue 8: live delta latency of a durable run. A model in a worker process yields text deltas;
// a `handle.events()` reader in this process (its own runtime and Redis connections) receives
// them. Each delta carries the wall-clock time it was yielded, so its latency is the time it was
// received minus that (both processes on one machine read the same clock). Side by side: the
// same stamps sent by a bare Redis PUBLISH from the worker process to a subscriber here.
//
//   npm run --silent bench:live            # builds first
//   node bench/live.mjs --runs=40 --deltas=25 --gap-ms=10 --busy=16
//
// Two loads: runs streamed one at a time, and `busy` runs streaming at once (the publisher
// joins deltas that queue behind an append, so there fewer events than deltas arrive).
// Redis: REDIS_URL when set, else a private redis-server on a free port.
import { fork } from "node:child_process";
import { once } from "node:events";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../dist/index.js";
import { deletePrefix, uniquePrefix } from "./lib/redis.mjs";
import { option, round, summarize } from "./lib/stats.mjs";
import { LIVE_AGENT, liveAgent, stamp, stampsOf } from "./runtime/live-agent.mjs";
import { redisServer, redisVersion } from "./runtime/redis-server.mjs";

const RUNS = option("runs", 40);
const DELTAS = option("deltas", 25);
const GAP_MS = option("gap-ms", 10);
const BUSY = option("busy", 16);
const REPETITIONS = option("repetitions", 3);

const log = (line) => process.stderr.write(`[bench:live] ${line}\n`);

async function main() {
  const loadAtStart = loadavg()[0];
  const redis = await redisServer();
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  const prefix = uniquePrefix("live");
  const worker = await startWorker(redis.url, prefix);
  const backend = redisBackend({ url: redis.url, prefix });
  const runtime = new AgentRuntime({
    agents: [liveAgent({ deltas: DELTAS, gapMs: GAP_MS })],
    backend,
    // Warnings go to stderr: stdout is the JSON document.
    logger: pino({ level: "warn" }, pino.destination(2)),
  });
  await runtime.start({ workers: false });
  const subscriber = new Redis(redis.url, { maxRetriesPerRequest: null });
  try {
    log(`warm-up`);
    await streamRuns(runtime, 5, 1);
    const samples = { idle: [], busy: [], raw: [] };
    const events = { idle: { deltas: 0, events: 0 }, busy: { deltas: 0, events: 0 } };
    for (let repetition = 1; repetition <= REPETITIONS; repetition += 1) {
      log(`repetition ${repetition}/${REPETITIONS}`);
      const idle = await streamRuns(runtime, RUNS, 1);
      const busy = await streamRuns(runtime, RUNS, BUSY);
      const raw = await rawPubSub(worker, subscriber, RUNS * DELTAS);
      for (const [name, measured] of Object.entries({ idle, busy })) {
        samples[name].push(...measured.latencies);
        events[name].deltas += measured.deltas;
        events[name].events += measured.events;
      }
      samples.raw.push(...raw);
      log(
        `idle p50 ${summarize(idle.latencies).p50} ms, busy p50 ${summarize(busy.latencies).p50} ms, raw p50 ${summarize(raw).p50} ms`,
      );
    }
    const idle = summarize(samples.idle);
    const busy = summarize(samples.busy);
    const raw = summarize(samples.raw);
    const output = {
      benchmark: "live delta latency: provider yields → handle.events() reader in another process",
      node: process.version,
      redis: await redisVersion(client),
      cpus: cpus().length,
      loadAverage1m: { start: round(loadAtStart), end: round(loadavg()[0]) },
      workload: {
        runsPerRepetition: RUNS,
        repetitions: REPETITIONS,
        deltasPerRun: DELTAS,
        gapMs: GAP_MS,
        busyRunsAtOnce: BUSY,
        reader: "this process: AgentRuntime.start({ workers: false }), handle.events()",
        worker: "one child process: AgentRuntime with workers, the streaming model",
      },
      deltaLatencyMs: {
        oneRunAtATime: idle,
        busy,
        rawPublishToSubscriber: raw,
        p50OverRaw: { oneRunAtATime: round(idle.p50 / raw.p50), busy: round(busy.p50 / raw.p50) },
      },
      deltasPerEvent: {
        oneRunAtATime: round(events.idle.deltas / events.idle.events),
        busy: round(events.busy.deltas / events.busy.events),
      },
    };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  } finally {
    await runtime.close({ timeoutMs: 5000 });
    await worker.close();
    subscriber.disconnect();
    await deletePrefix(client, prefix);
    client.disconnect();
    await redis.stop();
  }
}

/** `count` runs, `width` at once, each read with `handle.events()`: the latency of every delta. */
async function streamRuns(runtime, count, width) {
  const latencies = [];
  let deltas = 0;
  let events = 0;
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      const handle = await runtime.submit(LIVE_AGENT, "Stream.");
      for await (const event of handle.events()) {
        if (event.type === "result") {
          if (event.result.status !== "completed") {
            throw new Error(
              `a run ended ${event.result.status}: ${JSON.stringify(event.result.error)}`,
            );
          }
          continue;
        }
        if (event.type !== "text_delta") continue;
        const received = stamp();
        const stamps = stampsOf(event.text);
        events += 1;
        deltas += stamps.length;
        for (const sent of stamps) latencies.push((received - sent) / 1000);
      }
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  if (deltas !== count * DELTAS)
    throw new Error(`expected ${count * DELTAS} deltas, read ${deltas}`);
  return { latencies, deltas, events };
}

/** The baseline: stamped messages PUBLISHed by the worker process, received here. */
async function rawPubSub(worker, subscriber, count) {
  const channel = `${uniquePrefix("live-raw")}:channel`;
  const latencies = [];
  subscriber.on("message", (name, message) => {
    if (name === channel) latencies.push((stamp() - Number(message)) / 1000);
  });
  await subscriber.subscribe(channel);
  await worker.request("publish", { channel, count, gapMs: GAP_MS });
  while (latencies.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
  await subscriber.unsubscribe(channel);
  subscriber.removeAllListeners("message");
  return latencies;
}

async function startWorker(url, prefix) {
  const child = fork(
    fileURLToPath(new URL("./runtime/live-worker.mjs", import.meta.url)),
    [prefix, String(DELTAS), String(GAP_MS)],
    { stdio: ["ignore", "ignore", "inherit", "ipc"], env: { ...process.env, REDIS_URL: url } },
  );
  const waiting = new Map();
  child.on("message", (message) => waiting.get(message.type)?.(message));
  const next = (type) =>
    new Promise((resolve, reject) => {
      waiting.set(type, resolve);
      child.once("exit", (code) => reject(new Error(`live worker exited (${code})`)));
    });
  await next("ready");
  return {
    async request(type, body) {
      const reply = next(type);
      child.send({ type, ...body });
      return reply;
    },
    async close() {
      if (child.exitCode !== null) return;
      child.send({ type: "close" });
      await once(child, "exit");
    },
  };
}

await main();
