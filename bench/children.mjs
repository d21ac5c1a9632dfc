// bench:children — runs of runs (SPEC §14), side by side in one run, median of --rounds:
//  1. fanout: one parent whose first turn calls an agent tool 100 times (zero-latency model),
//     time to the parent's result, next to 100 independent runs of the child agent submitted
//     with submitMany (target ≤ 1.3×), on memory and on Redis; CPU of this process (the only
//     one: the runtime's workers run in it);
//  2. waiting: a waiting parent's Redis bytes and heap next to a parked run's (target ≤;
//     children/waiting-parent.mjs);
//  3. tree: a tree of 1,011 runs (1 → 10 → 10 → 9) on Redis with --processes worker processes,
//     runs/s next to as many flat runs on the same processes (target ≤ 1.3×), CPU per run of
//     each process (children/tree-throughput.mjs).
// Options: --children 100 --rounds 5 --fanout-warmup 3 --heap-runs 200 --processes 2
// --concurrency 64 --tree-warmup 3
// --parts fanout,waiting,tree (all unless given).
import { pino } from "pino";
import { AgentRuntime, memoryBackend, redisBackend } from "../dist/index.js";
import { fanOutAgents } from "./children/fanout-agents.mjs";
import { treeThroughput } from "./children/tree-throughput.mjs";
import { waitingParent } from "./children/waiting-parent.mjs";
import { connect, deletePrefix, REDIS_URL, uniquePrefix } from "./lib/redis.mjs";
import { median, now, option, round } from "./lib/stats.mjs";

const CHILDREN = option("children", 100);
const ROUNDS = option("rounds", 5);
const HEAP_RUNS = option("heap-runs", 200);
const PROCESSES = option("processes", 2);
const CONCURRENCY = option("concurrency", 64);
const TREE_WARMUP = option("tree-warmup", 3);
/** Untimed rounds of each side before the timed ones (one left JIT and heap growth in them). */
const FANOUT_WARMUP = option("fanout-warmup", 3);
const ALL_PARTS = ["fanout", "waiting", "tree"];
const PARTS = new Set(partsOption() ?? ALL_PARTS);
const logger = pino({ level: "silent" });

/** `--parts a,b`: the parts to run (all unless given). */
function partsOption() {
  const args = process.argv.slice(2);
  const at = args.findIndex((each) => each === "--parts" || each.startsWith("--parts="));
  if (at === -1) return undefined;
  const raw = args[at].includes("=") ? args[at].slice("--parts=".length) : args[at + 1];
  const parts = (raw ?? "").split(",").filter(Boolean);
  const unknown = parts.filter((each) => !ALL_PARTS.includes(each));
  if (parts.length === 0 || unknown.length > 0) {
    throw new Error(`--parts: a comma-separated list of ${ALL_PARTS.join(", ")} (got ${raw}).`);
  }
  return parts;
}

async function timed(work) {
  const cpu = process.cpuUsage();
  const started = now();
  await work();
  const used = process.cpuUsage(cpu);
  return { ms: now() - started, cpuMs: (used.user + used.system) / 1000 };
}

async function fanOut(backendOf) {
  const runtime = new AgentRuntime({
    agents: fanOutAgents(CHILDREN),
    backend: backendOf(),
    logger,
  });
  await runtime.start();
  const rounds = { tree: [], flat: [], treeCpu: [], flatCpu: [] };
  try {
    // Untimed rounds of each first (as many children as timed), then alternating timed rounds.
    for (let round_ = 0; round_ < FANOUT_WARMUP + ROUNDS; round_++) {
      const tree = await timed(async () => {
        const result = await (await runtime.submit("lead", "go")).result();
        if (result.status !== "completed") throw new Error(`parent ended ${result.status}`);
      });
      const inputs = Array.from({ length: CHILDREN }, (_, index) => `topic ${index}`);
      const flat = await timed(async () => {
        const handles = await runtime.submitMany("researcher", inputs);
        await Promise.all(handles.map((each) => each.result()));
      });
      if (round_ < FANOUT_WARMUP) continue;
      rounds.tree.push(tree.ms);
      rounds.flat.push(flat.ms);
      rounds.treeCpu.push(tree.cpuMs);
      rounds.flatCpu.push(flat.cpuMs);
    }
  } finally {
    await runtime.close({ timeoutMs: 5000 });
  }
  const tree = median(rounds.tree);
  const flat = median(rounds.flat);
  return {
    parentWithChildrenMs: round(tree),
    submitManyMs: round(flat),
    ratio: round(tree / flat),
    target: "≤ 1.3",
    cpuMsPerProcess: { tree: round(median(rounds.treeCpu)), flat: round(median(rounds.flatCpu)) },
    roundsMs: {
      tree: rounds.tree.map((ms) => round(ms)),
      flat: rounds.flat.map((ms) => round(ms)),
    },
  };
}

const redisCleanup = connect();
const prefixes = [];
const output = { benchmark: "children", children: CHILDREN, rounds: ROUNDS };
if (PARTS.has("fanout")) {
  output.fanOut = {
    warmupRounds: FANOUT_WARMUP,
    memory: await fanOut(() => memoryBackend()),
    redis: await fanOut(() => {
      const prefix = uniquePrefix("children-fanout");
      prefixes.push(prefix);
      return redisBackend({ url: REDIS_URL, prefix });
    }),
  };
}
if (PARTS.has("waiting")) output.waitingParent = await waitingParent({ heapRuns: HEAP_RUNS });
if (PARTS.has("tree")) {
  output.tree = await treeThroughput({
    processes: PROCESSES,
    rounds: ROUNDS,
    warmupRounds: TREE_WARMUP,
    concurrency: CONCURRENCY,
  });
}
for (const prefix of prefixes) await deletePrefix(redisCleanup, prefix);
redisCleanup.disconnect();
console.log(JSON.stringify(output, null, 2));
