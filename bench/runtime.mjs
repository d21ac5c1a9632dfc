// Issue 4: the durable runtime on Redis and in memory, side by side with raw BullMQ, in one run
// on the same Redis. Prints one JSON document to stdout; progress goes to stderr. Run with
// `npm run bench:runtime` (it builds first). See bench/README.md, section "Runtime".
//
// Options: --runs N (2000) runs per throughput measurement; the other sizes follow it unless
// given: --parked N (5 × runs), --latency-runs N (runs / 10, 20–200), --approvals N (parked /
// 20, 10–500), --warmup N (3 × runs) runs on each group before measuring; --repetitions N (5)
// interleaved repetitions of each throughput figure;
// --concurrency N (64) jobs of each queue per worker process; --semi-space-mb N (what
// `harnessx worker` runs with, 32; 0: Node's default) the young generation's semi-space of every
// worker process, harnessx's and raw BullMQ's alike (`node --max-semi-space-size`, see
// bench/README.md).
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue, QueueEvents } from "bullmq";
import { pino } from "pino";
import { WORKER_SEMI_SPACE_MB } from "../dist/cli/young-generation.js";
import { AgentRuntime, redisBackend } from "../dist/index.js";
import { spawnChild } from "./lib/children.mjs";
import {
  connect,
  counter,
  cpuSeconds,
  deletePrefix,
  memoryByKind,
  QUEUES,
  REDIS_URL,
  uniquePrefix,
  usedMemory,
} from "./lib/redis.mjs";
import { median, now, option, pool, round, summarize } from "./lib/stats.mjs";
import {
  benchAgents,
  checkCompleted,
  PARKED_AGENT,
  PROMPT,
  RUN_AGENT,
  TOOL_CALL_ID,
} from "./runtime/agents.mjs";
import { log, RAW_JOB_OPTIONS } from "./runtime/common.mjs";

const RUNS = option("runs", 2000);
const PARKED = option("parked", RUNS * 5);
const LATENCY_RUNS = option("latency-runs", Math.max(20, Math.min(200, Math.round(RUNS / 10))));
const APPROVALS = option("approvals", Math.max(10, Math.min(500, Math.round(PARKED / 20))));
// Five: on this shared host a repetition now and then runs a third slower, raw BullMQ included,
// for reasons not found; with three, one such repetition moved the median.
const REPETITIONS = option("repetitions", 5);
const CONCURRENCY = option("concurrency", 64);
/** Submits (or raw adds) the parent keeps in flight. */
const SUBMIT_WIDTH = 64;
// Three times the measured runs: a fresh harnessx worker takes about 4,000 runs to reach its
// steady speed (V8 optimises the engine's code as it goes; in one process, the embedded backend
// ran 2,000-run chunks at 1.9, 0.8, then 0.7 ms of CPU a run). With a tenth, every group's first
// repetition came out about a fifth slower than the others.
const WARMUP_RUNS = option("warmup", RUNS * 3);
/**
 * Worker processes' `--max-semi-space-size` (MB), harnessx's and raw BullMQ's alike: by default
 * the one `harnessx worker` runs with; `--semi-space-mb 0`, Node's default.
 */
const SEMI_SPACE_MB = process.argv.some((each) => each.startsWith("--semi-space-mb"))
  ? option("semi-space-mb", WORKER_SEMI_SPACE_MB, { min: 0 })
  : WORKER_SEMI_SPACE_MB;
const WORKER_FLAGS = SEMI_SPACE_MB === 0 ? [] : [`--max-semi-space-size=${SEMI_SPACE_MB}`];
/**
 * Parked before the heap and memory baselines: fills what the steps queue keeps whatever the runs
 * (1,000 completed jobs, an events stream of about 10,000 entries, 5 a parked run), so that the
 * bytes measured are the runs' own. With 500 (`--runs 1000`) the queue's filling added 300 B a run.
 */
const PARKED_WARMUP = Math.max(2500, Math.round(PARKED / 10));
const RAW_PAYLOAD_BYTES = 200;
const POLL_MS = 10;

const TARGETS = {
  throughputShareOfBound: 0.35,
  latencyP50OverRaw: 2,
  parkedBytesPerRun: 3072,
  parkedHeapGrowthBytesPerRun: 100,
};
const ISSUE_REFERENCES = {
  rawJobsPerSecondAtConcurrency64: 8000,
  rawMsPerJobAcrossProcesses: 2,
  rawWaitingJobBytes: 800,
};

const started = now();
const loadAtStart = loadavg()[0];
const source = sourceVersion();
const redis = connect();
const silent = pino({ level: "silent" });
const prefixes = new Set();
const children = new Set();
const url = (path) => new URL(path, import.meta.url);

const track = (prefix) => {
  prefixes.add(prefix);
  return prefix;
};

/** A child process; `execArgv`: its node flags (a worker process's, by default). */
async function spawn(script, args, execArgv = WORKER_FLAGS) {
  const child = await spawnChild(url(script), args, { execArgv });
  children.add(child);
  return child;
}

async function cleanUp() {
  await Promise.all([...children].map((child) => child.close().catch(() => {})));
  for (const prefix of prefixes) {
    try {
      await deletePrefix(redis, prefix);
    } catch (error) {
      log(`could not delete ${prefix}:*: ${error.message}`);
    }
  }
}

async function waitFor(condition, what, timeoutMs = 120_000) {
  const deadline = now() + timeoutMs;
  while (!(await condition())) {
    if (now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

// ---------------------------------------------------------------------------------------------
// Groups of worker processes

/** `processes` harnessx worker processes on one prefix, and a submit-only runtime here. */
async function harnessxGroup(processes, name) {
  const prefix = track(uniquePrefix(name));
  const workers = [];
  for (let index = 0; index < processes; index++) {
    workers.push(await spawn("./runtime/harnessx-worker.mjs", [prefix, String(CONCURRENCY)]));
  }
  const runtime = new AgentRuntime({
    agents: benchAgents(),
    backend: redisBackend({ url: REDIS_URL, prefix }),
    logger: silent,
  });
  await runtime.start({ workers: false });
  const status = (value) => `${prefix}:idx:status:${value}`;
  const jobCounts = async () => {
    const replies = await Promise.all(workers.map((worker) => worker.request("counts")));
    return {
      steps: replies.reduce((sum, each) => sum + each.steps, 0),
      tools: replies.reduce((sum, each) => sum + each.tools, 0),
      stepAdds: await counter(redis, `${prefix}:steps:id`),
      toolAdds: await counter(redis, `${prefix}:tools:id`),
    };
  };
  return { prefix, processes, workers, runtime, status, jobCounts };
}

/** `processes` raw BullMQ worker processes on one prefix, and the parent's queues. */
async function rawGroup(processes, name) {
  const prefix = track(uniquePrefix(name));
  const workers = [];
  const latest = [];
  const waiters = new Set();
  for (let index = 0; index < processes; index++) {
    const worker = await spawn("./runtime/raw-worker.mjs", [prefix, String(CONCURRENCY)]);
    latest.push({ finished: 0, processed: 0 });
    worker.onMessage((message) => {
      if (message.type !== "progress") return;
      latest[index] = message;
      for (const waiter of waiters) waiter();
    });
    workers.push(worker);
  }
  const total = (field) => latest.reduce((sum, each) => sum + each[field], 0);
  const connection = connect();
  const queues = {
    steps: new Queue("steps", { connection, prefix }),
    tools: new Queue("tools", { connection, prefix }),
  };
  return {
    prefix,
    processes,
    workers,
    queues,
    finished: () => total("finished"),
    processed: () => total("processed"),
    /** Resolves once the workers report `target` finished jobs or chains. */
    waitFinished(target) {
      return new Promise((resolve) => {
        const check = () => {
          if (total("finished") < target) return;
          waiters.delete(check);
          resolve(now());
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
      connection.disconnect();
    },
  };
}

/** A custom job id as long as the runtime's (`step-<runId>-<uuid>`), without ":". */
const rawJobId = () => `raw-${randomUUID()}-${randomUUID()}`;

// ---------------------------------------------------------------------------------------------
// Measurements

/** The CPU (user + system µs, `process.cpuUsage()`) the group's worker processes spent so far. */
async function workersCpuMicros(workers) {
  const replies = await Promise.all(workers.map((worker) => worker.request("cpu")));
  return replies.reduce((sum, { cpu }) => sum + cpu.user + cpu.system, 0);
}

/**
 * The CPU (µs) every process of the measurement spent so far, by process: the group's workers,
 * redis-server (`INFO cpu`: server-wide, and no other client uses it meanwhile) and this
 * submitting process. On a host with fewer cores than busy processes, throughput roughly
 * follows this sum's reciprocal: `cpuMsPerRun` shows where a run's cost lies.
 */
async function processesCpuMicros(workers) {
  const [worker, redisSeconds] = await Promise.all([workersCpuMicros(workers), cpuSeconds(redis)]);
  const { user, system } = process.cpuUsage();
  return { worker, redisServer: redisSeconds * 1e6, submitter: user + system };
}

/** `after - before` (µs, by process, as `processesCpuMicros` gives them) per unit, in ms. */
function cpuMsPer(before, after, units) {
  const each = (key) => (after[key] - before[key]) / units / 1000;
  const split = {
    worker: each("worker"),
    redisServer: each("redisServer"),
    submitter: each("submitter"),
  };
  return { ...split, total: split.worker + split.redisServer + split.submitter };
}

/**
 * Medians by process of harnessx's CPU per run and raw BullMQ's for a run's jobs
 * (`jobsPerRun` of them), with the ratio of the totals.
 */
function cpuMsPerRunFigures(harnessxSamples, rawSamples, jobsPerRun) {
  const medians = (samples, scale) =>
    Object.fromEntries(
      Object.keys(samples[0]).map((key) => [key, median(samples.map((each) => each[key])) * scale]),
    );
  const harnessx = medians(harnessxSamples, 1);
  const raw = medians(rawSamples, jobsPerRun);
  const rounded = (figures) =>
    Object.fromEntries(Object.entries(figures).map(([key, value]) => [key, round(value, 3)]));
  return {
    harnessx: rounded(harnessx),
    rawJobsOfOneRun: rounded(raw),
    totalRawOverHarnessx: round(raw.total / harnessx.total, 3),
  };
}

/** `runs` runs submitted from here (SUBMIT_WIDTH in flight) until all are completed. */
async function harnessxThroughput(group, runs) {
  const { runtime, status } = group;
  const completedBefore = await redis.zcard(status("completed"));
  const countsBefore = await group.jobCounts();
  const cpuBefore = await processesCpuMicros(group.workers);
  const begin = now();
  await pool(runs, SUBMIT_WIDTH, () => runtime.submit(RUN_AGENT, PROMPT));
  const submittedMs = now() - begin;
  await waitFor(async () => {
    const [completed, failed] = await Promise.all([
      redis.zcard(status("completed")),
      redis.zcard(status("failed")),
    ]);
    if (failed > 0) throw new Error(`${failed} runs failed under ${group.prefix}`);
    return completed >= completedBefore + runs;
  }, `${runs} completed runs`);
  const ms = now() - begin;
  const cpuMsPerRun = cpuMsPer(cpuBefore, await processesCpuMicros(group.workers), runs);
  const countsAfter = await group.jobCounts();
  const delta = (field) => (countsAfter[field] - countsBefore[field]) / runs;
  // Spot-check stored results (the completed count alone could hide a wrong result).
  const sample = await redis.zrange(status("completed"), -20, -1);
  for (const runId of sample) checkCompleted((await runtime.handle(runId).record()).result);
  return {
    ms,
    submittedMs,
    runsPerSecond: (runs / ms) * 1000,
    cpuMsPerRun,
    jobsPerRun: {
      processed: { steps: delta("steps"), tools: delta("tools") },
      added: { steps: delta("stepAdds"), tools: delta("toolAdds") },
    },
  };
}

/** `jobs` independent no-op jobs added from here, spread over the two queues like a run's. */
async function rawThroughput(group, jobs, toolShare) {
  const target = group.finished() + jobs;
  const cpuBefore = await processesCpuMicros(group.workers);
  const begin = now();
  await pool(jobs, SUBMIT_WIDTH, (index) => {
    const tool = Math.floor((index + 1) * toolShare) > Math.floor(index * toolShare);
    const queue = tool ? group.queues.tools : group.queues.steps;
    return queue.add("raw", { runId: randomUUID() }, { ...RAW_JOB_OPTIONS, jobId: rawJobId() });
  });
  const end = await group.waitFinished(target);
  const cpuMsPerJob = cpuMsPer(cpuBefore, await processesCpuMicros(group.workers), jobs);
  return {
    ms: end - begin,
    jobsPerSecond: (jobs / (end - begin)) * 1000,
    cpuMsPerJob,
  };
}

/** `runs` chains of no-op jobs (e.g. steps → tools → steps), each job adding its successor. */
async function rawChainedThroughput(group, runs, chain) {
  const target = group.finished() + runs;
  const begin = now();
  await pool(runs, SUBMIT_WIDTH, () => {
    const id = rawJobId();
    return group.queues[chain[0]].add(
      "raw",
      { chain, id },
      { ...RAW_JOB_OPTIONS, jobId: `${id}-0` },
    );
  });
  const end = await group.waitFinished(target);
  return { ms: end - begin, runsPerSecond: (runs / (end - begin)) * 1000 };
}

/** One run at a time: submit → `handle.result()`. */
async function harnessxLatency(group, runs) {
  const samples = [];
  for (let index = 0; index < runs; index++) {
    const begin = now();
    const handle = await group.runtime.submit(RUN_AGENT, PROMPT);
    const result = await handle.result();
    samples.push(now() - begin);
    checkCompleted(result);
  }
  return samples;
}

/** Completion notifications of the raw group's queues, by job id (BullMQ QueueEvents). */
async function rawCompletions(group) {
  const waiting = new Map();
  const listeners = [];
  for (const name of Object.keys(group.queues)) {
    const connection = connect();
    const events = new QueueEvents(name, { connection, prefix: group.prefix });
    events.on("completed", ({ jobId }) => {
      const resolve = waiting.get(jobId);
      if (resolve === undefined) return;
      waiting.delete(jobId);
      resolve(now());
    });
    await events.waitUntilReady();
    listeners.push({ events, connection });
  }
  return {
    completed: (jobId) => new Promise((resolve) => waiting.set(jobId, resolve)),
    async close() {
      for (const { events, connection } of listeners) {
        await events.close();
        connection.disconnect();
      }
    },
  };
}

/** One chain at a time: add its first job → its last job's `completed` event. */
async function rawChainLatency(group, completions, runs, chain) {
  const samples = [];
  for (let index = 0; index < runs; index++) {
    const id = rawJobId();
    const done = completions.completed(`${id}-${chain.length - 1}`);
    const begin = now();
    await group.queues[chain[0]].add(
      "raw",
      { chain, id },
      { ...RAW_JOB_OPTIONS, jobId: `${id}-0` },
    );
    samples.push((await done) - begin);
  }
  return samples;
}

/** One job at a time, `chain.length` jobs per sample: add → its `completed` event, then the next. */
async function rawJobSequenceLatency(group, completions, runs, chain) {
  const samples = [];
  for (let index = 0; index < runs; index++) {
    const begin = now();
    for (const name of chain) {
      const jobId = rawJobId();
      const done = completions.completed(jobId);
      await group.queues[name].add("raw", { runId: jobId }, { ...RAW_JOB_OPTIONS, jobId });
      await done;
    }
    samples.push(now() - begin);
  }
  return samples;
}

async function embeddedThroughput(embedded, runs) {
  const { ms } = await embedded.request("measure", { runs, width: SUBMIT_WIDTH });
  return { ms, runsPerSecond: (runs / ms) * 1000 };
}

/** Parked runs: Redis bytes and worker heap per run, then approve → completed latency. */
async function parkedRuns() {
  const group = await harnessxGroup(1, "parked");
  const [worker] = group.workers;
  const awaiting = group.status("awaiting_approval");
  const park = async (count) => {
    const before = await redis.zcard(awaiting);
    const begin = now();
    await pool(count, SUBMIT_WIDTH, () => group.runtime.submit(PARKED_AGENT, PROMPT));
    await waitFor(async () => (await redis.zcard(awaiting)) >= before + count, "parked runs");
    return now() - begin;
  };
  log(`parked: warm-up, ${PARKED_WARMUP} runs parked first`);
  await park(PARKED_WARMUP);
  const heapBefore = (await worker.request("heap")).heapUsed;
  const usedBefore = await usedMemory(redis);
  const storeBefore = await memoryByKind(redis, group.prefix);
  log(`parked: parking ${PARKED} runs`);
  const half = Math.floor(PARKED / 2);
  const parkMs = await park(half);
  const heapMiddle = (await worker.request("heap")).heapUsed;
  const parkRestMs = await park(PARKED - half);
  const usedAfter = await usedMemory(redis);
  const storeAfter = await memoryByKind(redis, group.prefix);
  const heapAfter = (await worker.request("heap")).heapUsed;
  const byKind = {};
  for (const [kind, { bytes, keys }] of Object.entries(storeAfter.byKind)) {
    const before = storeBefore.byKind[kind] ?? { bytes: 0, keys: 0 };
    // Keys that did not change by a byte per run (queue bookkeeping) are left out.
    if (Math.abs(bytes - before.bytes) < PARKED && keys === before.keys) continue;
    byKind[kind] = {
      bytesPerRun: round((bytes - before.bytes) / PARKED, 1),
      keysPerRun: round((keys - before.keys) / PARKED, 3),
    };
  }
  const parkedRecord = (await group.runtime.handle(await lastParked(awaiting)).record()).result;
  if (parkedRecord?.status !== "awaiting_approval" || parkedRecord.pending.length !== 1) {
    throw new Error(`expected a parked run with one pending call, got ${parkedRecord?.status}`);
  }

  // The baseline: a raw BullMQ waiting job with a 200-byte payload, no worker.
  const raw = await rawWaitingJobs(PARKED);

  log(`parked: approving ${APPROVALS} parked runs one at a time`);
  const runIds = await redis.zrange(awaiting, 0, APPROVALS - 1);
  const approvals = [];
  for (const runId of runIds) {
    const begin = now();
    await group.runtime.approve(runId, TOOL_CALL_ID);
    const result = await group.runtime.handle(runId).result();
    approvals.push(now() - begin);
    checkCompleted(result);
  }
  await group.runtime.close();
  const storeBytesPerRun = (storeAfter.bytes - storeBefore.bytes) / PARKED;
  const heapGrowthPerRun = (heapAfter - heapBefore) / PARKED;
  return {
    runs: PARKED,
    parkedBeforeBaseline: PARKED_WARMUP,
    parkRunsPerSecond: round((PARKED / (parkMs + parkRestMs)) * 1000),
    redisBytesPerParkedRun: {
      memoryUsage: round(storeBytesPerRun, 1),
      usedMemoryDelta: round((usedAfter - usedBefore) / PARKED, 1),
      byKind,
    },
    rawWaitingJob: raw,
    ratioToRawWaitingJob: round(storeBytesPerRun / raw.memoryUsage),
    workerHeap: {
      beforeBytes: heapBefore,
      middleBytes: heapMiddle,
      afterBytes: heapAfter,
      growthBytes: heapAfter - heapBefore,
      growthBytesPerParkedRun: round(heapGrowthPerRun, 1),
      secondHalfGrowthBytesPerParkedRun: round((heapAfter - heapMiddle) / (PARKED - half), 1),
    },
    approveToCompletedMs: summarize(approvals),
    met: {
      bytesPerRun: storeBytesPerRun <= TARGETS.parkedBytesPerRun,
      heapGrowth: heapGrowthPerRun <= TARGETS.parkedHeapGrowthBytesPerRun,
    },
  };
}

/** MEMORY USAGE of the run store's keys (not the queues') per completed run under a prefix. */
async function completedRunBytes(group) {
  const completed = await redis.zcard(group.status("completed"));
  const store = await memoryByKind(redis, group.prefix);
  const byKind = {};
  let bytes = 0;
  for (const [kind, entry] of Object.entries(store.byKind)) {
    if (QUEUES.has(kind.split(":")[0])) continue;
    bytes += entry.bytes;
    byKind[kind] = round(entry.bytes / completed, 1);
  }
  return { completedRuns: completed, bytesPerRun: round(bytes / completed, 1), byKind };
}

async function lastParked(awaiting) {
  const [runId] = await redis.zrange(awaiting, -1, -1);
  return runId;
}

async function rawWaitingJobs(count) {
  const prefix = track(uniquePrefix("rawparked"));
  const connection = connect();
  const queue = new Queue("waiting", { connection, prefix, defaultJobOptions: RAW_JOB_OPTIONS });
  const payload = "x".repeat(RAW_PAYLOAD_BYTES - '{"payload":""}'.length);
  await queue.add("raw", { payload }); // creates the queue's own keys (meta, id, events)
  const usedBefore = await usedMemory(redis);
  const storeBefore = await memoryByKind(redis, prefix);
  for (let index = 0; index < count; index += 1000) {
    const size = Math.min(1000, count - index);
    await queue.addBulk(Array.from({ length: size }, () => ({ name: "raw", data: { payload } })));
  }
  const usedAfter = await usedMemory(redis);
  const storeAfter = await memoryByKind(redis, prefix);
  await queue.close();
  connection.disconnect();
  return {
    payloadBytes: JSON.stringify({ payload }).length,
    memoryUsage: round((storeAfter.bytes - storeBefore.bytes) / count, 1),
    usedMemoryDelta: round((usedAfter - usedBefore) / count, 1),
  };
}

// ---------------------------------------------------------------------------------------------
// The run

/** The commit the build is from, and whether src/ had uncommitted changes (read-only git). */
function sourceVersion() {
  try {
    const git = (...args) => execFileSync("git", args, { encoding: "utf8" }).trim();
    return {
      commit: git("rev-parse", "--short", "HEAD"),
      srcChanged: git("status", "--porcelain", "src") !== "",
    };
  } catch {
    return { commit: "unknown", srcChanged: null };
  }
}

async function checkRedis() {
  await redis.ping();
  const [, policy] = await redis.config("GET", "maxmemory-policy");
  if (policy !== "noeviction") {
    throw new Error(
      `Redis at ${REDIS_URL} has maxmemory-policy ${policy}; harnessx needs noeviction.`,
    );
  }
  const info = await redis.info("server");
  return /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown";
}

async function main() {
  const redisVersion = await checkRedis();
  log(
    `runs ${RUNS}, repetitions ${REPETITIONS}, concurrency ${CONCURRENCY}, latency runs ${LATENCY_RUNS}, parked ${PARKED}, approvals ${APPROVALS}, Redis ${REDIS_URL}`,
  );

  const groups = [];
  for (const processes of [1, 2]) {
    groups.push({
      processes,
      harnessx: await harnessxGroup(processes, `hx${processes}p`),
      raw: await rawGroup(processes, `raw${processes}p`),
    });
  }

  // Warm-up, and the real number of jobs a run needs (counted by the workers and the queues).
  log(`warm-up: ${WARMUP_RUNS} runs on each group`);
  const calibration = await harnessxThroughput(groups[0].harnessx, WARMUP_RUNS);
  await harnessxThroughput(groups[1].harnessx, WARMUP_RUNS);
  const perRun = calibration.jobsPerRun.processed;
  const jobsPerRun = perRun.steps + perRun.tools;
  const toolShare = perRun.tools / jobsPerRun;
  const chain = ["steps", "tools", "steps"];
  if (Math.round(jobsPerRun) !== chain.length) {
    log(`warning: a run needs ${jobsPerRun} jobs, the raw chain has ${chain.length}`);
  }
  const rawJobs = Math.round(RUNS * jobsPerRun);
  for (const { raw } of groups) {
    await rawThroughput(raw, Math.round(WARMUP_RUNS * jobsPerRun), toolShare);
    await rawChainedThroughput(raw, WARMUP_RUNS, chain);
  }

  const samples = {
    embedded: [],
    ...Object.fromEntries(
      groups.flatMap(({ processes }) => [
        [`harnessx${processes}`, []],
        [`raw${processes}`, []],
        [`rawChained${processes}`, []],
      ]),
    ),
  };
  const tasks = [
    ...groups.flatMap(({ processes, harnessx, raw }) => [
      [`raw${processes}`, () => rawThroughput(raw, rawJobs, toolShare)],
      [`rawChained${processes}`, () => rawChainedThroughput(raw, RUNS, chain)],
      [`harnessx${processes}`, () => harnessxThroughput(harnessx, RUNS)],
    ]),
  ];
  for (let repetition = 0; repetition < REPETITIONS; repetition++) {
    for (let offset = 0; offset < tasks.length; offset++) {
      const [name, task] = tasks[(repetition + offset) % tasks.length];
      const sample = await task();
      samples[name].push(sample);
      const rate = sample.runsPerSecond ?? sample.jobsPerSecond;
      const unit = sample.runsPerSecond === undefined ? "jobs/s" : "runs/s";
      log(`repetition ${repetition + 1}/${REPETITIONS} ${name}: ${rate.toFixed(0)} ${unit}`);
    }
  }

  // What finished runs leave in Redis (nothing expires them): bytes per completed run.
  const retained = await completedRunBytes(groups[0].harnessx);

  // Latency, with one worker process: one run (or chain) at a time.
  log(`latency: ${LATENCY_RUNS} sequential runs, chains and job sequences (1 worker process)`);
  const [single] = groups;
  const completions = await rawCompletions(single.raw);
  await harnessxLatency(single.harnessx, 10);
  await rawChainLatency(single.raw, completions, 10, chain);
  await rawJobSequenceLatency(single.raw, completions, 10, chain);
  const latency = { harnessx: [], rawChain: [], rawJobSequence: [] };
  // Interleaved in chunks so that a burst of load lands on all three.
  const chunk = Math.max(1, Math.round(LATENCY_RUNS / 4));
  for (let done = 0; done < LATENCY_RUNS; done += chunk) {
    const size = Math.min(chunk, LATENCY_RUNS - done);
    latency.harnessx.push(...(await harnessxLatency(single.harnessx, size)));
    latency.rawChain.push(...(await rawChainLatency(single.raw, completions, size, chain)));
    latency.rawJobSequence.push(
      ...(await rawJobSequenceLatency(single.raw, completions, size, chain)),
    );
  }
  await completions.close();

  for (const group of groups) {
    await group.harnessx.runtime.close();
    await group.raw.close();
    for (const worker of [...group.harnessx.workers, ...group.raw.workers]) {
      await worker.close();
      children.delete(worker);
    }
  }
  // The embedded backend runs apart, once the Redis groups' processes are gone: it measures
  // one process on its own, and interleaved with them it read what the others left running
  // (1,090–1,180 runs/s; 1,440 apart, the same hour).
  log("embedded backend: warm-up, then its repetitions");
  // An application's process, not a `harnessx worker`: Node's default heap.
  const embedded = await spawn("./runtime/embedded.mjs", [String(CONCURRENCY)], []);
  await embeddedThroughput(embedded, WARMUP_RUNS);
  for (let repetition = 0; repetition < REPETITIONS; repetition++) {
    const sample = await embeddedThroughput(embedded, RUNS);
    samples.embedded.push(sample);
    log(
      `repetition ${repetition + 1}/${REPETITIONS} embedded: ${sample.runsPerSecond.toFixed(0)} runs/s`,
    );
  }
  await embedded.close();
  children.delete(embedded);

  log("parked runs");
  const parked = await parkedRuns();

  // ---- figures
  const medianOf = (name, field) => median(samples[name].map((each) => each[field]));
  const throughput = {};
  for (const { processes } of groups) {
    const rawJobsPerSecond = medianOf(`raw${processes}`, "jobsPerSecond");
    const bound = rawJobsPerSecond / jobsPerRun;
    const harnessx = medianOf(`harnessx${processes}`, "runsPerSecond");
    const cpu = cpuMsPerRunFigures(
      samples[`harnessx${processes}`].map((each) => each.cpuMsPerRun),
      samples[`raw${processes}`].map((each) => each.cpuMsPerJob),
      jobsPerRun,
    );
    throughput[`${processes === 1 ? "one" : "two"}WorkerProcess${processes === 1 ? "" : "es"}`] = {
      harnessxRunsPerSecond: round(harnessx),
      harnessxRepetitions: samples[`harnessx${processes}`].map((each) => round(each.runsPerSecond)),
      rawJobsPerSecond: round(rawJobsPerSecond),
      rawRepetitions: samples[`raw${processes}`].map((each) => round(each.jobsPerSecond)),
      boundRunsPerSecond: round(bound),
      rawChainedRunsPerSecond: round(medianOf(`rawChained${processes}`, "runsPerSecond")),
      shareOfBound: round(harnessx / bound, 3),
      // Each repetition's runs/s over the bound from the raw jobs measured in the same
      // repetition, a task or two apart: steadier than the medians' ratio on a host whose speed
      // drifts from minute to minute.
      shareOfBoundByRepetition: samples[`harnessx${processes}`].map((each, index) =>
        round(
          each.runsPerSecond / (samples[`raw${processes}`][index].jobsPerSecond / jobsPerRun),
          3,
        ),
      ),
      met: harnessx / bound >= TARGETS.throughputShareOfBound,
      // What the worker processes spent: steadier than rates on a host whose speed drifts,
      // since a slow spell slows both sides' CPU alike.
      workerCpuMsPerRun: {
        harnessx: cpu.harnessx.worker,
        rawJobsOfOneRun: cpu.rawJobsOfOneRun.worker,
        rawOverHarnessx: round(cpu.rawJobsOfOneRun.worker / cpu.harnessx.worker, 3),
      },
      // What every process spent (workers, redis-server, this submitting process), medians by
      // process. Where the processes outnumber the cores, shareOfBound tracks the totals' ratio.
      cpuMsPerRun: cpu,
    };
  }
  const harnessxLatencySummary = summarize(latency.harnessx);
  const rawSequenceSummary = summarize(latency.rawJobSequence);
  const rawChainSummary = summarize(latency.rawChain);
  const require = createRequire(import.meta.url);
  const versionOf = (path) => JSON.parse(readFileSync(path, "utf8")).version;

  return {
    benchmark: "harnessx durable runtime: Redis and embedded backends next to raw BullMQ (issue 4)",
    environment: {
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      cpu: cpus()[0]?.model ?? "unknown",
      cpuCount: cpus().length,
      redis: redisVersion,
      harnessx: versionOf(new URL("../package.json", import.meta.url)),
      source,
      bullmq: versionOf(require.resolve("bullmq/package.json")),
      ioredis: versionOf(require.resolve("ioredis/package.json")),
      loadAverage1m: { start: round(loadAtStart), end: round(loadavg()[0]) },
      ioredisAutoPipelining: process.env.HARNESSX_BENCH_AUTOPIPELINING === "1",
    },
    workload: {
      run: "provider → one no-op tool → provider (zero-latency model scripted by turn)",
      runs: RUNS,
      repetitions: REPETITIONS,
      concurrencyPerQueuePerProcess: CONCURRENCY,
      submitsInFlight: SUBMIT_WIDTH,
      warmupRunsPerGroup: WARMUP_RUNS,
      workerSemiSpaceMb: SEMI_SPACE_MB === 0 ? "node default" : SEMI_SPACE_MB,
      jobsPerRun: {
        processed: {
          steps: round(perRun.steps, 3),
          tools: round(perRun.tools, 3),
          total: round(jobsPerRun, 3),
        },
        added: calibration.jobsPerRun.added,
      },
      rawChain: chain.join(" → "),
    },
    throughput,
    latency: {
      runs: LATENCY_RUNS,
      workerProcesses: 1,
      harnessxSubmitToResultMs: harnessxLatencySummary,
      rawJobSequenceMs: rawSequenceSummary,
      rawChainMs: rawChainSummary,
      p50OverRawJobSequence: round(harnessxLatencySummary.p50 / rawSequenceSummary.p50),
      p50OverRawChain: round(harnessxLatencySummary.p50 / rawChainSummary.p50),
      met: harnessxLatencySummary.p50 <= TARGETS.latencyP50OverRaw * rawSequenceSummary.p50,
      metAgainstRawChain:
        harnessxLatencySummary.p50 <= TARGETS.latencyP50OverRaw * rawChainSummary.p50,
    },
    parked,
    completedRunsLeftInRedis: retained,
    embedded: {
      runsPerSecond: round(medianOf("embedded", "runsPerSecond")),
      repetitions: samples.embedded.map((each) => round(each.runsPerSecond)),
    },
    targets: TARGETS,
    issueReferences: ISSUE_REFERENCES,
    durationSeconds: round((now() - started) / 1000, 1),
  };
}

process.once("SIGINT", () => {
  log("interrupted: deleting the benchmark's keys");
  cleanUp().finally(() => process.exit(130));
});

let exitCode = 0;
try {
  const report = await main();
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} catch (error) {
  log(`failed: ${error?.stack ?? error}`);
  exitCode = 1;
} finally {
  await cleanUp();
  redis.disconnect();
}
process.exit(exitCode);
