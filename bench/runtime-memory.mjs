// The durable runtime's memory, side by side with raw BullMQ in one run on the same Redis:
// bytes a worker process allocates per run (collected or not) against the raw worker's for the
// same three jobs chained (steps → tools → steps), and the worker's heap per run held in
// flight (its model call waiting) with 256 and 5,000 in flight. Prints one JSON document.
//
//   node bench/runtime-memory.mjs [--runs 2000] [--repetitions 5] [--warmup 4000]
//
// Allocation: V8's sampling heap profiler in each worker process (bench/lib/allocations.mjs),
// over each repetition's runs; medians of the repetitions, harnessx and raw interleaved.
// In flight: heapUsed after forced GCs with the runs held, over the same before them.
import { randomUUID } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue } from "bullmq";
import { pino } from "pino";
import { WORKER_SEMI_SPACE_MB } from "../dist/cli/young-generation.js";
import { AgentRuntime, redisBackend } from "../dist/index.js";
import { spawnChild } from "./lib/children.mjs";
import { connect, deletePrefix, REDIS_URL, uniquePrefix } from "./lib/redis.mjs";
import { median, now, option, pool, round } from "./lib/stats.mjs";
import { benchAgents, HELD_AGENT, PROMPT, RUN_AGENT } from "./runtime/agents.mjs";
import { log, RAW_JOB_OPTIONS } from "./runtime/common.mjs";

const RUNS = option("runs", 2000);
const REPETITIONS = option("repetitions", 5);
const WARMUP = option("warmup", RUNS * 2);
const CONCURRENCY = 64;
const SUBMIT_WIDTH = 64;
const IN_FLIGHT = [256, 5000];
const WORKER_FLAGS = [`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`];
const TARGETS = { allocatedBytesPerRun: 385_000, heapBytesPerRunInFlight: 10_240 };

const redis = connect();
const silent = pino({ level: "silent" });
const prefixes = [];
const children = [];
function track(prefix) {
  prefixes.push(prefix);
  return prefix;
}
const url = (path) => new URL(path, import.meta.url);

async function spawn(script, args) {
  const child = await spawnChild(url(script), args, { execArgv: WORKER_FLAGS });
  children.push(child);
  return child;
}

async function waitFor(condition, what, timeoutMs = 120_000) {
  const deadline = now() + timeoutMs;
  while (!(await condition())) {
    if (now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** A harnessx worker process and a submit-only runtime here, on a prefix of their own. */
async function harnessxGroup(name, concurrency) {
  const prefix = track(uniquePrefix(name));
  const worker = await spawn("./runtime/harnessx-worker.mjs", [prefix, String(concurrency)]);
  const runtime = new AgentRuntime({
    agents: benchAgents(),
    backend: redisBackend({ url: REDIS_URL, prefix }),
    logger: silent,
  });
  await runtime.start({ workers: false });
  const completed = `${prefix}:idx:status:completed`;
  /** Submits `count` runs of `agent`; resolves once they completed. */
  const runs = async (count, agent = RUN_AGENT) => {
    const target = (await redis.zcard(completed)) + count;
    await pool(count, SUBMIT_WIDTH, () => runtime.submit(agent, PROMPT));
    return async () => waitFor(async () => (await redis.zcard(completed)) >= target, "runs");
  };
  return { worker, runtime, runs };
}

/** A raw BullMQ worker process and the queues here; a "run" is three jobs chained. */
async function rawGroup(name) {
  const prefix = track(uniquePrefix(name));
  const worker = await spawn("./runtime/raw-worker.mjs", [prefix, String(CONCURRENCY)]);
  let finished = 0;
  worker.onMessage((message) => {
    if (message.type === "progress") finished = message.finished;
  });
  const queue = new Queue("steps", { connection: connect(), prefix });
  const chain = ["steps", "tools", "steps"];
  const runs = async (count) => {
    const target = finished + count;
    await pool(count, SUBMIT_WIDTH, () => {
      const id = randomUUID();
      return queue.add("raw", { chain, id }, { ...RAW_JOB_OPTIONS, jobId: `${id}-0` });
    });
    await waitFor(async () => finished >= target, "raw chains");
  };
  return { worker, runs, queue };
}

/** Bytes `worker` allocates while `work` runs, per run. */
async function allocatedPerRun(worker, count, work) {
  await worker.request("allocStart");
  await work();
  const { bytes } = await worker.request("allocStop");
  return bytes / count;
}

async function allocation() {
  const harnessx = await harnessxGroup("memalloc", CONCURRENCY);
  const raw = await rawGroup("memraw");
  log(`allocation: warm-up, ${WARMUP} runs on each`);
  await (await harnessx.runs(WARMUP))();
  await raw.runs(WARMUP);
  const samples = { harnessx: [], raw: [] };
  for (let repetition = 0; repetition < REPETITIONS; repetition++) {
    samples.harnessx.push(
      await allocatedPerRun(harnessx.worker, RUNS, async () => (await harnessx.runs(RUNS))()),
    );
    samples.raw.push(await allocatedPerRun(raw.worker, RUNS, () => raw.runs(RUNS)));
    log(
      `repetition ${repetition + 1}/${REPETITIONS}: harnessx ${round(samples.harnessx.at(-1) / 1024)} KB a run, raw ${round(samples.raw.at(-1) / 1024)} KB`,
    );
  }
  await harnessx.runtime.close();
  await raw.queue.close();
  const perRun = median(samples.harnessx);
  const rawPerRun = median(samples.raw);
  return {
    runsPerRepetition: RUNS,
    harnessxBytesPerRun: round(perRun),
    harnessxRepetitions: samples.harnessx.map((each) => round(each)),
    rawThreeJobsBytesPerRun: round(rawPerRun),
    rawRepetitions: samples.raw.map((each) => round(each)),
    overRaw: round(perRun / rawPerRun),
    met: perRun <= TARGETS.allocatedBytesPerRun,
  };
}

async function inFlight() {
  const largest = Math.max(...IN_FLIGHT);
  const group = await harnessxGroup("memheld", largest + CONCURRENCY);
  const { worker } = group;
  const hold = async (count) => {
    const done = await group.runs(count, HELD_AGENT);
    await waitFor(async () => (await worker.request("held")).calls >= count, "held runs");
    return done;
  };
  // Warm-up: the worker's code paths and BullMQ's retention, as in steady work.
  log("in flight: warm-up");
  // Concurrency here is 5,064: a warm-up of thousands at once times commands out on a busy host.
  await (await group.runs(Math.min(WARMUP, 500)))();
  const warm = await hold(IN_FLIGHT[0]);
  await worker.request("release");
  await warm();
  const figures = {};
  for (const count of IN_FLIGHT) {
    const before = (await worker.request("heap")).heapUsed;
    let done;
    try {
      done = await hold(count);
    } catch (error) {
      // Reported, not thrown: what a worker process does with that many runs is a finding too.
      const { calls } = await worker.request("held");
      figures[count] = { error: error.message, heldWhenGivenUp: calls };
      log(`in flight: ${count} runs: ${error.message} (${calls} held)`);
      await worker.request("release");
      break;
    }
    const during = (await worker.request("heap")).heapUsed;
    const perRun = (during - before) / count;
    figures[count] = {
      heapBeforeBytes: before,
      heapInFlightBytes: during,
      bytesPerRunInFlight: round(perRun),
      met: perRun <= TARGETS.heapBytesPerRunInFlight,
    };
    log(`in flight: ${count} runs held, ${round(perRun)} B each`);
    await worker.request("release");
    try {
      await done();
    } catch (error) {
      // Reported: released runs that do not complete in time are a finding, not a figure.
      figures[count].afterRelease = error.message;
      break;
    }
    figures[count].heapAfterBytes = (await worker.request("heap")).heapUsed;
  }
  await group.runtime.close();
  return figures;
}

async function main() {
  const loadAtStart = loadavg()[0];
  const started = now();
  const allocated = await allocation();
  const held = await inFlight();
  return {
    benchmark: "harnessx durable runtime's memory: allocation per run and heap per run in flight",
    environment: {
      node: process.version,
      cpu: cpus()[0]?.model ?? "unknown",
      cpuCount: cpus().length,
      loadAverage1m: { start: round(loadAtStart), end: round(loadavg()[0]) },
      workerSemiSpaceMb: WORKER_SEMI_SPACE_MB,
    },
    workload: {
      run: "provider → one no-op tool → provider (zero-latency model scripted by turn)",
      held: "the same run, its first model call waiting until released",
      repetitions: REPETITIONS,
      warmupRuns: WARMUP,
    },
    allocatedPerRun: allocated,
    heapPerRunInFlight: held,
    targets: TARGETS,
    durationSeconds: round((now() - started) / 1000, 1),
  };
}

let exitCode = 0;
try {
  process.stdout.write(`${JSON.stringify(await main(), null, 2)}\n`);
} catch (error) {
  log(`failed: ${error?.stack ?? error}`);
  exitCode = 1;
} finally {
  await Promise.all(children.map((child) => child.close().catch(() => {})));
  for (const prefix of prefixes) await deletePrefix(redis, prefix).catch(() => {});
  redis.disconnect();
}
process.exit(exitCode);
