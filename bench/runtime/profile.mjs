// Where a Redis-backed run's time goes. Three modes, each printing one JSON document to stdout:
//
//   node bench/runtime/profile.mjs round-trips [runs=100]
//     One process submits runs one at a time and works them (workers in-process). Every
//     command ioredis sends is recorded (Redis.prototype.sendCommand wrapped) and attributed
//     with AsyncLocalStorage to the part of the run that sent it: submit, step job, tool job,
//     BullMQ's own worker loop, or the waiting `handle.result()`. Lua scripts are named (the
//     runtime's by their keys, BullMQ's by SHA). Prints per-run counts by part and command,
//     round trips (a pipeline counts once), and the timeline of one run.
//
//   node bench/runtime/profile.mjs sequential [runs=300]
//     One run at a time on one harnessx worker process, as the latency figure is measured:
//     submit → result latency, and the CPU the worker, this process and redis-server spend per
//     run meanwhile.
//
//   node bench/runtime/profile.mjs cpu [runs=2000] [cpuProfileDir]
//     A throughput run on one harnessx worker process (as bench/runtime.mjs measures it), then
//     the same number of raw no-op BullMQ jobs on one raw worker process: CPU of the worker, of
//     this submitting process and of redis-server (INFO cpu), and the server's command calls
//     and µs (INFO commandstats deltas), per run and per raw job. With `cpuProfileDir`, the
//     harnessx worker runs under --cpu-prof; summarise the file with
//     bench/summarize-profile.mjs.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { benchAgents, checkCompleted, PROMPT, RUN_AGENT } from "./agents.mjs";
import {
  bullmqScripts,
  commandStats,
  connect,
  cpuSeconds,
  deletePrefix,
  log,
  now,
  pool,
  RAW_JOB_OPTIONS,
  REDIS_URL,
  round,
  spawnChild,
  summarize,
  uniquePrefix,
} from "./common.mjs";

const [mode = "round-trips", runsArgument, profileDirectory] = process.argv.slice(2);

// ---------------------------------------------------------------------------------------------
// Naming what a command is

/** The kind of a key under `prefix`: `run`, `lease`, `events`, `steps:wait` … */
function keyKind(key, prefix) {
  if (typeof key !== "string" || !key.startsWith(`${prefix}:`)) return "?";
  const [first, second] = key.slice(prefix.length + 1).split(":");
  if (first === "steps" || first === "tools") {
    return /^[a-z-]+$/.test(second ?? "") ? `${first}:${second}` : `${first}:<job>`;
  }
  return first;
}

/**
 * The runtime's own scripts (src/runtime/redis-scripts.ts), told apart by their first key and
 * number of keys; a script it does not know yet is shown as `script <key kind>/<keys>`.
 */
function runtimeScript(kind, keys, argv, lastArg) {
  if (kind === "lease")
    return keys === 1 ? "renewLease" : keys === 2 ? "releaseLease" : "acquireLease";
  if (kind === "run" && keys === 2) return "createRun";
  if (kind === "run" && keys === 7) return "saveRun";
  if (kind === "run" && keys > 7) return "saveRun (finished: sets expiries)";
  if (kind === "run" && keys === 4) return "openToolCall";
  if (kind === "inflight" && keys === 3) return "markCallStarted";
  if (kind === "cancel") return "requestCancel";
  if (kind === "raw" && keys === 3) return "commitRaw";
  // READ_EVENTS takes a position and a count; APPEND_EVENTS a bound and the events (JSON).
  if (kind === "events") {
    return argv === 2 && !String(lastArg).startsWith("{") ? "readEvents" : "appendEvents";
  }
  return `script ${kind}/${keys}`;
}

function describe(command, prefix, scripts) {
  const name = command.name.toLowerCase();
  const args = command.args.map((each) => (Buffer.isBuffer(each) ? each.toString() : each));
  if (name === "evalsha" || name === "eval") {
    const bullmq = scripts.get(args[0]);
    if (bullmq !== undefined) return bullmq;
    const keys = Number(args[1]);
    const argv = args.length - 2 - keys;
    return `harnessx ${runtimeScript(keyKind(args[2], prefix), keys, argv, args.at(-1))}`;
  }
  if (name === "xread") {
    const streams = args.findIndex((each) => String(each).toUpperCase() === "STREAMS");
    return `xread ${keyKind(args[streams + 1], prefix)}`;
  }
  if (name === "client") return `client ${String(args[0]).toLowerCase()}`;
  return args.length === 0 ? name : `${name} ${keyKind(args[0], prefix)}`;
}

// ---------------------------------------------------------------------------------------------
// round-trips

async function roundTrips(runs) {
  const prefix = uniquePrefix("profile");
  const scripts = await bullmqScripts();
  const part = new AsyncLocalStorage();
  let recording = false;
  /** Every command sent while recording: { part, what, pipeline, sentAt, repliedAt }. */
  const sent = [];
  const original = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function sendCommand(command, stream) {
    const result = original.call(this, command, stream);
    if (recording && command?.name !== undefined) {
      const entry = {
        part: part.getStore() ?? "bullmq worker loop",
        what: describe(command, prefix, scripts),
        pipeline: stream === undefined ? null : stream,
        bytes: command.args.reduce(
          (sum, each) =>
            sum + (Buffer.isBuffer(each) ? each.length : Buffer.byteLength(String(each))),
          0,
        ),
        sentAt: now(),
        repliedAt: undefined,
      };
      sent.push(entry);
      command.promise?.then(
        () => {
          entry.repliedAt = now();
        },
        () => {
          entry.repliedAt = now();
        },
      );
    }
    return result;
  };

  const backend = redisBackend({ url: REDIS_URL, prefix });
  const start = backend.start.bind(backend);
  let toolJobs = 0;
  let stepJobs = 0;
  backend.start = (options) =>
    start({
      ...options,
      processors: {
        step: (job, delivery) =>
          part.run(`step job ${++stepJobs}`, () => options.processors.step(job, delivery)),
        tool: (job, delivery) =>
          part.run(`tool job ${++toolJobs}`, () => options.processors.tool(job, delivery)),
      },
    });
  const runtime = new AgentRuntime({
    agents: benchAgents(),
    backend,
    concurrency: 64,
    logger: pino({ level: "silent" }),
  });
  await runtime.start();
  const runOnce = async () => {
    const handle = await part.run("submit", () => runtime.submit(RUN_AGENT, PROMPT));
    const result = await part.run("handle.result()", () => handle.result());
    checkCompleted(result);
  };
  for (let index = 0; index < 20; index++) await runOnce(); // warm-up

  const perRun = [];
  const latencies = [];
  for (let index = 0; index < runs; index++) {
    sent.length = 0;
    stepJobs = 0;
    toolJobs = 0;
    recording = true;
    const begin = now();
    await runOnce();
    latencies.push(now() - begin);
    // Let BullMQ finish the last job's bookkeeping (moveToFinished) before counting.
    await new Promise((resolve) => setTimeout(resolve, 20));
    recording = false;
    perRun.push({ begin, commands: [...sent] });
  }
  await runtime.close({ timeoutMs: 10_000 });
  Redis.prototype.sendCommand = original;
  const redis = connect();
  await deletePrefix(redis, prefix);
  redis.disconnect();

  // Per part (step jobs numbered in order: "step job 1" is the first step of the run).
  const partOf = (entry) => entry.part;
  const tally = (select, weigh = () => 1) => {
    const counts = new Map();
    for (const { commands } of perRun) {
      for (const entry of commands) {
        const key = select(entry);
        if (key === undefined) continue;
        counts.set(key, (counts.get(key) ?? 0) + weigh(entry));
      }
    }
    return Object.fromEntries(
      [...counts]
        .sort((left, right) => right[1] - left[1])
        .map(([key, count]) => [key, round(count / runs, 2)]),
    );
  };
  const roundTripsPerRun = (select) => {
    let total = 0;
    for (const { commands } of perRun) {
      const pipelines = new Set();
      for (const entry of commands) {
        if (select !== undefined && !select(entry)) continue;
        if (entry.pipeline === null) total++;
        else pipelines.add(entry.pipeline);
      }
      total += pipelines.size;
    }
    return round(total / runs, 2);
  };
  const blocking = (entry) => /^(bzpopmin|xread|brpoplpush|blmove)/.test(entry.what);
  const parts = [...new Set(perRun.flatMap(({ commands }) => commands.map(partOf)))].sort();
  const byPart = {};
  for (const name of parts) {
    byPart[name] = {
      commands: tally((entry) => (entry.part === name ? entry.what : undefined)),
      roundTrips: roundTripsPerRun((entry) => entry.part === name),
    };
  }
  // The timeline of the median run.
  const medianIndex = latencies.indexOf([...latencies].sort((a, b) => a - b)[Math.floor(runs / 2)]);
  const { begin, commands } = perRun[medianIndex];
  const timeline = commands.map(
    (entry) =>
      `${(entry.sentAt - begin).toFixed(2).padStart(6)} ms +${((entry.repliedAt ?? entry.sentAt) - entry.sentAt).toFixed(2).padStart(5)}  ${entry.part.padEnd(18)} ${entry.pipeline === null ? "" : "[pipeline] "}${entry.what}`,
  );
  return {
    mode: "round-trips",
    runs,
    latencyMs: summarize(latencies),
    perRun: {
      commands: round(perRun.reduce((sum, each) => sum + each.commands.length, 0) / runs, 2),
      roundTrips: roundTripsPerRun(),
      roundTripsExcludingBlockingReads: roundTripsPerRun((entry) => !blocking(entry)),
      evalshaScripts: roundTripsPerRun((entry) => /^(bullmq|harnessx) /.test(entry.what)),
      argumentBytes: round(
        perRun.reduce(
          (sum, each) => sum + each.commands.reduce((bytes, entry) => bytes + entry.bytes, 0),
          0,
        ) / runs,
        0,
      ),
    },
    byCommand: tally((entry) => entry.what),
    argumentBytesByCommand: tally(
      (entry) => entry.what,
      (entry) => entry.bytes,
    ),
    byPart,
    medianRunTimeline: timeline,
  };
}

// ---------------------------------------------------------------------------------------------
// cpu

/** CPU of a worker process, of this process and of redis-server, and server commandstats, around `work`. */
async function measureCpu(redis, worker, units, work) {
  const workerBefore = (await worker.request("cpu")).cpu;
  const parentBefore = process.cpuUsage();
  const redisBefore = await cpuSeconds(redis);
  const statsBefore = await commandStats(redis);
  const ms = await work();
  const workerAfter = (await worker.request("cpu")).cpu;
  const parentAfter = process.cpuUsage(parentBefore);
  const redisAfter = await cpuSeconds(redis);
  const statsAfter = await commandStats(redis);
  const perUnitMs = (micros) => round(micros / 1000 / units, 3);
  const commands = {};
  for (const [name, after] of statsAfter) {
    const before = statsBefore.get(name) ?? { calls: 0, usec: 0 };
    if (after.calls === before.calls || name === "info") continue;
    commands[name] = {
      calls: round((after.calls - before.calls) / units, 2),
      usec: round((after.usec - before.usec) / units, 1),
    };
  }
  const sorted = Object.entries(commands).sort((left, right) => right[1].usec - left[1].usec);
  return {
    perSecond: round((units / ms) * 1000),
    cpuMs: {
      worker: perUnitMs(
        workerAfter.user - workerBefore.user + workerAfter.system - workerBefore.system,
      ),
      submitter: perUnitMs(parentAfter.user + parentAfter.system),
      redisServer: round(((redisAfter - redisBefore) * 1000) / units, 3),
    },
    redisCommands: {
      calls: round(
        sorted.reduce((sum, [, each]) => sum + each.calls, 0),
        2,
      ),
      usec: round(
        sorted.reduce((sum, [, each]) => sum + each.usec, 0),
        1,
      ),
      byCommand: Object.fromEntries(sorted),
    },
  };
}

async function cpu(runs, directory) {
  const redis = connect();
  // HARNESSX_PROFILE=heap samples every allocation, collected or not (allocation-sampler.mjs),
  // instead of CPU.
  const heap = process.env.HARNESSX_PROFILE === "heap";
  if (heap && directory !== undefined) process.env.HARNESSX_ALLOCATION_DIR = directory;
  const execArgv =
    directory === undefined
      ? []
      : heap
        ? ["--import", new URL("./allocation-sampler.mjs", import.meta.url).href]
        : ["--cpu-prof", `--cpu-prof-dir=${directory}`];
  const waitCompleted = async (key, target) => {
    while ((await redis.zcard(key)) < target) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  // harnessx: one worker process, runs submitted from here.
  const prefix = uniquePrefix("profilecpu");
  const worker = await spawnChild(
    new URL("./harnessx-worker.mjs", import.meta.url),
    [prefix, "64"],
    {
      execArgv,
    },
  );
  const runtime = new AgentRuntime({
    agents: benchAgents(),
    backend: redisBackend({ url: REDIS_URL, prefix }),
    logger: pino({ level: "silent" }),
  });
  await runtime.start({ workers: false });
  const completed = `${prefix}:idx:status:completed`;
  const throughput = async (count) => {
    const target = (await redis.zcard(completed)) + count;
    const begin = now();
    await pool(count, 64, () => runtime.submit(RUN_AGENT, PROMPT));
    await waitCompleted(completed, target);
    return now() - begin;
  };
  await throughput(200); // warm-up
  const harnessx = await measureCpu(redis, worker, runs, () => throughput(runs));
  const { steps, tools } = await worker.request("counts");
  const jobsPerRun = (steps + tools) / (runs + 200);
  await runtime.close();
  await worker.close();
  await deletePrefix(redis, prefix);

  // Raw BullMQ: the same number of no-op jobs, added from here, on one raw worker process.
  const rawPrefix = uniquePrefix("profileraw");
  const raw = await spawnChild(new URL("./raw-worker.mjs", import.meta.url), [rawPrefix, "64"]);
  let finished = 0;
  let onProgress = () => {};
  raw.onMessage((message) => {
    if (message.type !== "progress") return;
    finished = message.finished;
    onProgress();
  });
  const connection = connect();
  const queues = {
    steps: new Queue("steps", { connection, prefix: rawPrefix }),
    tools: new Queue("tools", { connection, prefix: rawPrefix }),
  };
  const jobs = async (count) => {
    const target = finished + count;
    const begin = now();
    await pool(count, 64, (index) =>
      (index % 3 === 1 ? queues.tools : queues.steps).add(
        "raw",
        { runId: randomUUID() },
        { ...RAW_JOB_OPTIONS, jobId: `raw-${randomUUID()}-${randomUUID()}` },
      ),
    );
    await new Promise((resolve) => {
      onProgress = () => finished >= target && resolve();
      onProgress();
    });
    return now() - begin;
  };
  await jobs(600); // warm-up
  const rawJobs = Math.round(runs * jobsPerRun);
  const rawResult = await measureCpu(redis, raw, rawJobs, () => jobs(rawJobs));
  await Promise.all(Object.values(queues).map((queue) => queue.close()));
  connection.disconnect();
  await raw.close();
  await deletePrefix(redis, rawPrefix);
  redis.disconnect();

  const perRun = (value) => round(value * jobsPerRun, 3);
  return {
    mode: "cpu",
    runs,
    jobsPerRun: round(jobsPerRun, 3),
    harnessxPerRun: { runsPerSecond: harnessx.perSecond, ...harnessx, perSecond: undefined },
    rawPerJob: { jobsPerSecond: rawResult.perSecond, ...rawResult, perSecond: undefined },
    rawForOneRunsJobs: {
      cpuMs: {
        worker: perRun(rawResult.cpuMs.worker),
        submitter: perRun(rawResult.cpuMs.submitter),
        redisServer: perRun(rawResult.cpuMs.redisServer),
      },
      redisCommandCalls: perRun(rawResult.redisCommands.calls),
      redisCommandUsec: perRun(rawResult.redisCommands.usec),
    },
    note: "redis-server CPU and commandstats are server-wide: other clients of the same Redis add to them. Server command calls include the commands Lua scripts run.",
  };
}

/**
 * One run at a time (as bench/runtime.mjs measures latency): submit → `handle.result()` on one
 * harnessx worker process, and the CPU each process spends per run meanwhile.
 */
async function sequential(runs) {
  const redis = connect();
  const prefix = uniquePrefix("profileseq");
  const worker = await spawnChild(new URL("./harnessx-worker.mjs", import.meta.url), [
    prefix,
    "64",
  ]);
  const runtime = new AgentRuntime({
    agents: benchAgents(),
    backend: redisBackend({ url: REDIS_URL, prefix }),
    logger: pino({ level: "silent" }),
  });
  await runtime.start({ workers: false });
  const one = async () => {
    const begin = now();
    checkCompleted(await (await runtime.submit(RUN_AGENT, PROMPT)).result());
    return now() - begin;
  };
  for (let index = 0; index < 100; index++) await one();
  const workerBefore = (await worker.request("cpu")).cpu;
  const submitterBefore = process.cpuUsage();
  const redisBefore = await cpuSeconds(redis);
  const latencies = [];
  for (let index = 0; index < runs; index++) latencies.push(await one());
  const workerAfter = (await worker.request("cpu")).cpu;
  const submitter = process.cpuUsage(submitterBefore);
  const redisAfter = await cpuSeconds(redis);
  const perRunMs = (microseconds) => round(microseconds / 1000 / runs, 3);
  await runtime.close();
  await worker.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
  return {
    mode: "sequential",
    runs,
    submitToResultMs: summarize(latencies),
    cpuMsPerRun: {
      worker: perRunMs(
        workerAfter.user + workerAfter.system - workerBefore.user - workerBefore.system,
      ),
      workerSystem: perRunMs(workerAfter.system - workerBefore.system),
      submitter: perRunMs(submitter.user + submitter.system),
      redisServer: round(((redisAfter - redisBefore) * 1000) / runs, 3),
    },
  };
}

const report =
  mode === "cpu"
    ? await cpu(Number(runsArgument ?? 2000), profileDirectory)
    : mode === "sequential"
      ? await sequential(Number(runsArgument ?? 300))
      : await roundTrips(Number(runsArgument ?? 100));
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
log(`profile ${mode} done`);
process.exit(0);
