// One heap measurement of bench:children's waiting part, in a fresh process (so that one
// measurement's compiled code and caches are not another's baseline):
//
//   node --expose-gc bench/children/heap-probe.mjs <memory|redis> <parent|parked> <runs>
//
// Prints {"bytesPerRun": …}: the settled heap's growth per run of the agent once parked (a
// "parent" run is a tree: the parent waiting, its child parked), after as many runs as warm-up.
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { AgentRuntime, memoryBackend, redisBackend } from "../../dist/index.js";
import { connect, deletePrefix, REDIS_URL, uniquePrefix } from "../lib/redis.mjs";
import { agents, parkedRuns } from "./waiting-agents.mjs";

const [backendName, agent, runsArgument] = process.argv.slice(2);
const runs = Number(runsArgument);
const prefix = uniquePrefix("children-heap");
const runtime = new AgentRuntime({
  agents: agents(),
  backend: backendName === "redis" ? redisBackend({ url: REDIS_URL, prefix }) : memoryBackend(),
  logger: pino({ level: "silent" }),
});

const settledHeap = async () => {
  // The last saves and notices settle before the heap is read.
  await sleep(500);
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};

const submit = async (from, count) => {
  for (let index = from; index < from + count; index++) await runtime.submit(agent, `go ${index}`);
  // One parked run each: the run itself, or a tree's child (its parent waits).
  await parkedRuns(runtime, from + count);
};

await runtime.start();
try {
  await submit(0, runs);
  const before = await settledHeap();
  await submit(runs, runs);
  const after = await settledHeap();
  process.stdout.write(`${JSON.stringify({ bytesPerRun: (after - before) / runs })}\n`);
} finally {
  await runtime.close({ timeoutMs: 5000 });
  if (backendName === "redis") {
    const redis = connect();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}
