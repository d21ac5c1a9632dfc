// bench:children, part "tree": a tree of 1,011 runs (1 root → 10 → 10 → 9, tree-agents.mjs) on
// Redis with `processes` worker processes, runs/s next to as many flat runs of the leaf agent
// (submitMany) on the same processes, alternating, median of `rounds`; CPU per run of each
// worker process, of redis-server and of this submitting process.
import { loadavg } from "node:os";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { spawnChild } from "../lib/children.mjs";
import {
  connect,
  counter,
  cpuSeconds,
  deletePrefix,
  REDIS_URL,
  uniquePrefix,
} from "../lib/redis.mjs";
import { median, now, round } from "../lib/stats.mjs";
import { bullmqScripts } from "../runtime/common.mjs";
import { LEAF_AGENT, ROOT_AGENT, TREE_RUNS, treeAgents, WIDTHS } from "./tree-agents.mjs";

const log = (line) => process.stderr.write(`[bench:children] ${line}\n`);

/** CPU µs so far: each worker process's, redis-server's (server-wide) and this process's. */
async function cpuNow(workers, redis) {
  const replies = await Promise.all(workers.map((worker) => worker.request("cpu")));
  const { user, system } = process.cpuUsage();
  return {
    workers: replies.map(({ cpu }) => cpu.user + cpu.system),
    redisServer: (await cpuSeconds(redis)) * 1e6,
    submitter: user + system,
  };
}

/** Redis commands the worker processes sent so far, summed over them, by command. */
async function commandsSent(workers) {
  const replies = await Promise.all(workers.map((worker) => worker.request("commands")));
  const sum = { total: 0, byName: {} };
  for (const { commands } of replies) {
    sum.total += commands.total;
    for (const [name, count] of Object.entries(commands.byName)) {
      sum.byName[name] = (sum.byName[name] ?? 0) + count;
    }
  }
  return sum;
}

/** BullMQ's scripts by the first 8 characters of their SHA; the others are harnessx's. */
const bullmqNames = new Map(
  [...(await bullmqScripts())].map(([sha, name]) => [sha.slice(0, 8), name]),
);
const scriptName = (name) => {
  if (!name.startsWith("evalsha:")) return name;
  const sha = name.slice("evalsha:".length);
  return bullmqNames.get(sha) ?? `harnessx script ${sha}`;
};

/** Commands a run between two `commandsSent` readings: total, and the ten most sent. */
function commandsPerRun(before, after, runs) {
  const byName = Object.entries(after.byName)
    .map(([name, count]) => [
      scriptName(name),
      round((count - (before.byName[name] ?? 0)) / runs, 2),
    ])
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10);
  return { total: round((after.total - before.total) / runs, 2), top: Object.fromEntries(byName) };
}

/** CPU ms per run between two `cpuNow` readings. */
function cpuMsPerRun(before, after, runs) {
  const per = (micros) => round(micros / runs / 1000, 3);
  return {
    workers: after.workers.map((each, at) => per(each - before.workers[at])),
    redisServer: per(after.redisServer - before.redisServer),
    submitter: per(after.submitter - before.submitter),
  };
}

export async function treeThroughput({ processes, rounds, warmupRounds, concurrency }) {
  const prefix = uniquePrefix("children-tree");
  const redis = connect();
  const workers = [];
  const runtime = new AgentRuntime({
    agents: treeAgents(),
    backend: redisBackend({ url: REDIS_URL, prefix }),
    logger: pino({ level: "silent" }),
  });
  const inputs = Array.from({ length: TREE_RUNS }, (_, index) => `topic ${index}`);
  const tree = async () => {
    const result = await (await runtime.submit(ROOT_AGENT, "go")).result();
    if (result.status !== "completed") throw new Error(`the tree's root ended ${result.status}`);
  };
  const flat = async () => {
    const handles = await runtime.submitMany(LEAF_AGENT, inputs);
    const results = await Promise.all(handles.map((each) => each.result()));
    const failed = results.find((each) => each.status !== "completed");
    if (failed) throw new Error(`a flat run ended ${failed.status}`);
  };
  // Jobs added so far (BullMQ's id counters): steps and tool jobs.
  const jobsAdded = async () => ({
    steps: await counter(redis, `${prefix}:harnessx-steps:id`),
    tools: await counter(redis, `${prefix}:harnessx-tools:id`),
  });
  const measure = async (work) => {
    const [before, jobsBefore] = [await cpuNow(workers, redis), await jobsAdded()];
    const commandsBefore = await commandsSent(workers);
    const started = now();
    await work();
    const ms = now() - started;
    const [after, jobsAfter] = [await cpuNow(workers, redis), await jobsAdded()];
    const commandsAfter = await commandsSent(workers);
    const per = (key) => round((jobsAfter[key] - jobsBefore[key]) / TREE_RUNS, 2);
    return {
      ms,
      cpu: cpuMsPerRun(before, after, TREE_RUNS),
      jobs: { steps: per("steps"), tools: per("tools") },
      commands: commandsPerRun(commandsBefore, commandsAfter, TREE_RUNS),
    };
  };
  try {
    for (let index = 0; index < processes; index++) {
      workers.push(
        await spawnChild(new URL("./tree-worker.mjs", import.meta.url), [
          prefix,
          String(concurrency),
        ]),
      );
    }
    await runtime.start({ workers: false });
    log(`tree: warming up (${TREE_RUNS} runs a round, ${processes} worker processes)`);
    // Fresh worker processes speed up over their first thousands of runs (V8 optimising as it
    // goes): with one warm-up round each, the rounds after still sped up one after another.
    for (let round_ = 0; round_ < warmupRounds; round_++) {
      await tree();
      await flat();
    }
    const samples = { tree: [], flat: [] };
    for (let round_ = 0; round_ < rounds; round_++) {
      samples.tree.push(await measure(tree));
      samples.flat.push(await measure(flat));
      log(
        `tree: round ${round_ + 1}: tree ${round(samples.tree.at(-1).ms)} ms, flat ${round(samples.flat.at(-1).ms)} ms, load ${loadavg()[0].toFixed(1)}`,
      );
    }
    const figures = (list) => {
      const ms = median(list.map((each) => each.ms));
      const cpu = (pick) => round(median(list.map(pick)), 3);
      return {
        runsPerSecond: round((TREE_RUNS / ms) * 1000),
        medianMs: round(ms),
        cpuMsPerRun: {
          workers: workers.map((_, at) => cpu((each) => each.cpu.workers[at])),
          redisServer: cpu((each) => each.cpu.redisServer),
          submitter: cpu((each) => each.cpu.submitter),
        },
        jobsPerRun: list.at(-1).jobs,
        workerCommandsPerRun: list.at(-1).commands,
        roundsMs: list.map((each) => round(each.ms)),
      };
    };
    const treeFigures = figures(samples.tree);
    const flatFigures = figures(samples.flat);
    return {
      shape: `1 root → ${WIDTHS.join(" → ")} (${TREE_RUNS} runs, depth ${WIDTHS.length})`,
      processes,
      concurrencyPerProcess: concurrency,
      warmupRounds,
      tree: treeFigures,
      flat: flatFigures,
      ratio: round(flatFigures.runsPerSecond / treeFigures.runsPerSecond),
      target: "≤ 1.3 (flat runs/s over the tree's)",
    };
  } finally {
    await runtime.close({ timeoutMs: 5000 });
    await Promise.all(workers.map((worker) => worker.close().catch(() => {})));
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}
