// Issue 14: scheduling many model-bound runs on Redis, in one run, side by side. Prints one
// JSON document to stdout; progress goes to stderr. `npm run bench:scheduling` (builds first).
// Uses REDIS_URL when set, otherwise starts a private redis-server on a free port.
//
//   throughput: --runs N (10000) runs of model → tool → model, each call --latency-ms (1000),
//     on 1 and on 2 worker processes with the default concurrency (256 steps, 32 tools), and
//     on 1 process with --wide-steps (5000) steps; wall time next to the ideal; heap per
//     in-flight run (heapUsed after a GC at the busiest second, less the idle heap).
//   submit: --submits N (10000) runs by submitMany vs one awaited submit at a time, beside a
//     floor: a raw BullMQ addBulk of as many step-sized jobs (what the bulk submit adds on top
//     of its records). submitMany and the floor run --submit-repeats (3) times: median and all.
//   rate limit: --rpm R (600) over 2 worker processes and --limited-runs N (500) one-call runs
//     (each call --limited-latency-ms, 200): requests per --window-s (10) window, and the
//     busiest sliding 1 s window beside the per-second limit.
//   --only submit,throughput,rate-limit: run just those sections (all by default).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { cpus, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { Agent, AgentRuntime, redisBackend } from "../dist/index.js";
import { median, option, round } from "./lib/stats.mjs";
import { redisServer } from "./runtime/redis-server.mjs";

const RUNS = option("runs", 10_000);
const LATENCY_MS = option("latency-ms", 1000);
const WIDE_STEPS = option("wide-steps", 5000);
const SUBMITS = option("submits", 10_000);
const RPM = option("rpm", 600);
const LIMITED_RUNS = option("limited-runs", 500);
const LIMITED_LATENCY_MS = option("limited-latency-ms", 200);
const WINDOW_S = option("window-s", 10);
const SUBMIT_REPEATS = option("submit-repeats", 3);
const DEFAULT_STEPS = 256;
const SECTIONS = ["submit", "throughput", "rate-limit"];
const only = (() => {
  const at = process.argv.indexOf("--only");
  return at === -1 ? SECTIONS : process.argv[at + 1].split(",");
})();

const log = (line) => process.stderr.write(`[bench:scheduling] ${line}\n`);
const silent = pino({ level: "silent" });
const workerScript = new URL("./scheduling/worker.mjs", import.meta.url);
const cleanups = [];

const server = await redisServer();
cleanups.push(server.stop);
const url = server.url;
const redis = new Redis(url, { maxRetriesPerRequest: null });
let prefixCount = 0;
const freshPrefix = (part) => {
  prefixCount += 1;
  return `hxsched-${part}-${process.pid}-${prefixCount}`;
};

/** A runtime that only submits, with agents of the workers' names. */
async function submitter(prefix) {
  const agents = ["tooling", "limited"].map(
    (name) => new Agent({ config: { name }, logger: silent }),
  );
  const runtime = new AgentRuntime({
    agents,
    backend: redisBackend({ url, prefix }),
    logger: silent,
  });
  await runtime.start({ workers: false });
  return runtime;
}

/** Starts `count` worker processes; resolves once each printed its first sample. */
async function startWorkers(count, env) {
  const workers = [];
  for (let at = 0; at < count; at += 1) {
    const child = spawn(process.execPath, ["--expose-gc", workerScript.pathname], {
      env: { ...process.env, REDIS_URL: url, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const samples = [];
    let partial = "";
    let ready;
    const first = new Promise((resolve) => {
      ready = resolve;
    });
    child.stdout.on("data", (chunk) => {
      partial += chunk.toString();
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        samples.push(JSON.parse(line));
        ready();
      }
    });
    workers.push({ child, samples, first });
  }
  await Promise.all(workers.map((worker) => worker.first));
  return {
    workers,
    async stop() {
      await Promise.all(
        workers.map(async ({ child }) => {
          child.kill("SIGTERM");
          if (child.exitCode === null) await once(child, "exit");
        }),
      );
    },
  };
}

/** Resolves when `count` runs under `prefix` finished (completed or failed). */
async function finished(prefix, count) {
  for (;;) {
    const [completed, failed] = await Promise.all([
      redis.zcard(`${prefix}:idx:status:completed`),
      redis.zcard(`${prefix}:idx:status:failed`),
    ]);
    if (completed + failed >= count) return { completed, failed };
    await sleep(50);
  }
}

async function deletePrefix(prefix) {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
}

async function throughput(processes, concurrency) {
  const prefix = freshPrefix(`tp${processes}`);
  const pool = await startWorkers(processes, {
    HX_PREFIX: prefix,
    HX_LATENCY_MS: String(LATENCY_MS),
    HX_CONCURRENCY:
      concurrency === undefined ? "default" : `${concurrency.steps},${concurrency.tools}`,
  });
  const runtime = await submitter(prefix);
  const idleHeap = pool.workers.map(({ samples }) => samples.at(-1).heap);
  const started = performance.now();
  await runtime.submitMany(
    "tooling",
    Array.from({ length: RUNS }, (_, at) => `q${at}`),
  );
  const submittedMs = performance.now() - started;
  const outcome = await finished(prefix, RUNS);
  const wallMs = performance.now() - started;
  const steps = concurrency?.steps ?? DEFAULT_STEPS;
  // Two model calls in sequence per run; at most `steps` calls in flight per process.
  const idealMs = Math.max(2 * LATENCY_MS, (2 * LATENCY_MS * RUNS) / (steps * processes));
  const perRun = pool.workers.map(({ samples }, at) => {
    const busiest = samples.reduce((best, sample) =>
      sample.inFlight > best.inFlight ? sample : best,
    );
    return {
      inFlight: busiest.inFlight,
      heapPerInFlightRunBytes:
        busiest.inFlight === 0
          ? null
          : Math.round((busiest.heap - idleHeap[at]) / busiest.inFlight),
    };
  });
  await runtime.close();
  await pool.stop();
  await deletePrefix(prefix);
  return {
    processes,
    concurrency: concurrency ?? { steps: DEFAULT_STEPS, tools: 32 },
    runs: RUNS,
    completed: outcome.completed,
    failed: outcome.failed,
    submitMs: round(submittedMs, 0),
    wallMs: round(wallMs, 0),
    idealMs: round(idealMs, 0),
    wallOverIdeal: round(wallMs / idealMs),
    wallOverIssueIdeal2s: round(wallMs / (2 * LATENCY_MS)),
    busiestSecondPerProcess: perRun,
  };
}

/** Redis's CPU time so far (ms, user + system): a private server's is the bench's alone. */
async function redisCpuMs() {
  const info = await redis.info("cpu");
  const field = (name) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? Number.NaN);
  return (field("used_cpu_user") + field("used_cpu_sys")) * 1000;
}

/**
 * Times `work`: wall, this process's CPU and Redis's CPU (ms). CPU times hold up on a busy
 * machine, where the wall time mostly says how much CPU the others took.
 */
async function timed(work) {
  const redisBefore = await redisCpuMs();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await work();
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const redisMs = (await redisCpuMs()) - redisBefore;
  return { wallMs, nodeCpuMs: (cpu.user + cpu.system) / 1000, redisCpuMs: redisMs };
}

/** One submitMany of `inputs` on a fresh prefix, `timed`. */
async function timedSubmitMany(inputs) {
  const prefix = freshPrefix("bulk");
  const bulk = await submitter(prefix);
  const times = await timed(() => bulk.submitMany("tooling", inputs));
  await bulk.close();
  await deletePrefix(prefix);
  return times;
}

/** The floor, `timed`: a raw BullMQ addBulk of `count` jobs shaped like a submit's step jobs. */
async function timedRawAddBulk(count) {
  const prefix = freshPrefix("raw");
  const queue = new Queue("harnessx-steps", { connection: { url }, prefix });
  await queue.waitUntilReady();
  const jobs = Array.from({ length: count }, () => {
    const runId = randomUUID();
    return {
      name: `step:${runId}`,
      data: { runId, agent: "tooling" },
      opts: { jobId: `step-${runId}-${randomUUID()}` },
    };
  });
  const times = await timed(() => queue.addBulk(jobs));
  await queue.close();
  await deletePrefix(prefix);
  return times;
}

async function submits() {
  const inputs = Array.from({ length: SUBMITS }, (_, at) => `q${at}`);
  const bulkMs = [];
  const rawMs = [];
  // Interleaved, so that load from elsewhere falls on both alike.
  for (let round = 0; round < SUBMIT_REPEATS; round += 1) {
    bulkMs.push(await timedSubmitMany(inputs));
    rawMs.push(await timedRawAddBulk(SUBMITS));
  }

  const onePrefix = freshPrefix("one");
  const single = await submitter(onePrefix);
  const started = performance.now();
  for (const input of inputs) await single.submit("tooling", input);
  const oneByOneMs = performance.now() - started;
  await single.close();
  await deletePrefix(onePrefix);
  const summary = (runs) => ({
    wallMs: round(median(runs.map((run) => run.wallMs)), 0),
    wallMsEach: runs.map((run) => round(run.wallMs, 0)),
    nodeCpuMs: round(median(runs.map((run) => run.nodeCpuMs)), 0),
    redisCpuMs: round(median(runs.map((run) => run.redisCpuMs)), 0),
  });
  const submitMany = summary(bulkMs);
  const rawAddBulk = summary(rawMs);
  return {
    submits: SUBMITS,
    submitManyMs: submitMany.wallMs,
    submitMany,
    rawBullmqAddBulk: rawAddBulk,
    submitManyOverRawAddBulk: round(submitMany.wallMs / rawAddBulk.wallMs),
    oneByOneMs: round(oneByOneMs, 0),
    speedup: round(oneByOneMs / submitMany.wallMs, 1),
    submitManyPerSecond: Math.round(SUBMITS / (submitMany.wallMs / 1000)),
  };
}

async function rateLimit() {
  const prefix = freshPrefix("rl");
  const pool = await startWorkers(2, {
    HX_PREFIX: prefix,
    HX_RPM: String(RPM),
    HX_LIMITED_LATENCY_MS: String(LIMITED_LATENCY_MS),
  });
  const runtime = await submitter(prefix);
  const started = Date.now();
  await runtime.submitMany(
    "limited",
    Array.from({ length: LIMITED_RUNS }, (_, at) => `r${at}`),
  );
  const outcome = await finished(prefix, LIMITED_RUNS);
  const wallMs = Date.now() - started;
  const calls = (await redis.lrange(`${prefix}:bench:calls`, 0, -1))
    .map(Number)
    .sort((a, b) => a - b);
  await runtime.close();
  await pool.stop();
  await deletePrefix(prefix);
  const windowMs = WINDOW_S * 1000;
  const limitPerWindow = (RPM * WINDOW_S) / 60;
  const first = calls[0] ?? started;
  const last = calls.at(-1) ?? started;
  // Consecutive windows from the first call; the last, partial window is not "while queued".
  const windows = [];
  for (let from = first; from + windowMs <= last; from += windowMs) {
    windows.push(calls.filter((at) => at >= from && at < from + windowMs).length);
  }
  const gaps = calls
    .slice(1)
    .map((at, index) => at - calls[index])
    .sort((a, b) => a - b);
  const slidingMax = (span) => {
    let max = 0;
    let low = 0;
    for (let high = 0; high < calls.length; high += 1) {
      while (calls[high] - calls[low] >= span) low += 1;
      max = Math.max(max, high - low + 1);
    }
    return max;
  };
  return {
    requestsPerMinute: RPM,
    processes: 2,
    runs: LIMITED_RUNS,
    completed: outcome.completed,
    failed: outcome.failed,
    calls: calls.length,
    wallMs,
    windowSeconds: WINDOW_S,
    limitPerWindow,
    requestsPerFullWindow: windows,
    maxPerWindow: Math.max(...windows),
    minShareOfLimitWhileQueued: round(Math.min(...windows) / limitPerWindow),
    limitPerSecond: RPM / 60,
    maxInAnySliding1s: slidingMax(1000),
    // Evenly spread, consecutive calls are 60 s / RPM apart (100 ms at 600 a minute).
    spacingMs: 60_000 / RPM,
    minGapMs: gaps.length === 0 ? null : gaps[0],
    fifthPercentileGapMs: gaps.length === 0 ? null : gaps[Math.floor(gaps.length / 20)],
    maxInAnySlidingWindow: slidingMax(windowMs),
    overallRequestsPerMinute: round((calls.length - 1) / ((last - first) / 60_000), 1),
  };
}

const report = {
  bench: "scheduling",
  machine: {
    cpus: cpus().length,
    loadAtStart: round(loadavg()[0]),
    shared: "yes: 2 cores shared by other engineers",
  },
  redis: process.env.REDIS_URL ? "REDIS_URL" : "private redis-server",
  latencyMs: LATENCY_MS,
};
try {
  if (only.includes("submit")) {
    log("submit: submitMany vs raw addBulk vs one by one");
    report.submit = await submits();
    log(JSON.stringify(report.submit));
  }
  if (only.includes("throughput")) {
    log("throughput: 1 process, defaults");
    report.throughput = [await throughput(1)];
    log(JSON.stringify(report.throughput[0]));
    log("throughput: 2 processes, defaults");
    report.throughput.push(await throughput(2));
    log(JSON.stringify(report.throughput[1]));
    log(`throughput: 1 process, ${WIDE_STEPS} steps`);
    report.throughput.push(await throughput(1, { steps: WIDE_STEPS, tools: 32 }));
    log(JSON.stringify(report.throughput[2]));
  }
  if (only.includes("rate-limit")) {
    log("rate limit: 2 processes");
    report.rateLimit = await rateLimit();
  }
  report.loadAtEnd = round(loadavg()[0]);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  redis.disconnect();
  for (const cleanup of cleanups) await cleanup();
}
