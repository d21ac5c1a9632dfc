// bench:children, part "waiting": what a waiting parent keeps, next to a parked run (target ≤).
//  - Redis bytes (MEMORY USAGE … SAMPLES 0) of one parent's own keys while its one child waits
//    for a person, next to one parked run's (the same call, of a plain tool that asks first).
//    `runStoreBytes`: the run store's keys; `withQueueHistoryBytes` adds the finished BullMQ
//    jobs the run left (kept by the queues up to `keepCompletedJobs` whatever the runs, so at
//    scale they are no run's own).
//  - Heap per waiting parent (a tree of parent + parked child, less a parked run) next to a
//    parked run's, with --heap-runs of each after as many to warm up, on memory and on Redis
//    (workers in the measuring process), each measured in a fresh process (heap-probe.mjs).

import { execFileSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { connect, deletePrefix, REDIS_URL, uniquePrefix } from "../lib/redis.mjs";
import { round } from "../lib/stats.mjs";
import { agents, parkedRuns } from "./waiting-agents.mjs";

const logger = pino({ level: "silent" });

/** Own keys of `runId` (not its children's), MEMORY USAGE each, by key with the id as <run>. */
async function ownKeys(redis, prefix, runId) {
  const byKey = {};
  let runStoreBytes = 0;
  let queueBytes = 0;
  for (const key of await redis.keys(`${prefix}:*`)) {
    if (!key.includes(runId) || key.includes(`${runId}.`)) continue;
    const used = Number(await redis.memory("USAGE", key, "SAMPLES", "0"));
    const name = key.slice(prefix.length + 1).replace(runId, "<run>");
    byKey[name.startsWith("harnessx-") ? name.replace(/-[0-9a-f-]{36}$/, "-<uuid>") : name] = used;
    if (name.startsWith("harnessx-")) queueBytes += used;
    else runStoreBytes += used;
  }
  return { runStoreBytes, withQueueHistoryBytes: runStoreBytes + queueBytes, byKey };
}

async function redisBytes() {
  const redis = connect();
  const measure = async (agent) => {
    const prefix = uniquePrefix(`children-${agent}`);
    const runtime = new AgentRuntime({
      agents: agents(),
      backend: redisBackend({ url: REDIS_URL, prefix }),
      logger,
    });
    await runtime.start();
    try {
      const handle = await runtime.submit(agent, "go");
      await parkedRuns(runtime, 1);
      // The parent's last save (waiting) may follow its child's parking by a moment.
      await sleep(200);
      return await ownKeys(redis, prefix, handle.runId);
    } finally {
      await runtime.close({ timeoutMs: 2000 });
      await deletePrefix(redis, prefix);
    }
  };
  const waiting = await measure("parent");
  const parked = await measure("parked");
  redis.disconnect();
  return {
    waitingParent: waiting,
    parkedRun: parked,
    runStoreRatio: round(waiting.runStoreBytes / parked.runStoreBytes),
    withQueueHistoryRatio: round(waiting.withQueueHistoryBytes / parked.withQueueHistoryBytes),
    target: "≤ 1",
  };
}

/** Heap per run of `agent` (memory or redis), measured by heap-probe.mjs in a process of its own. */
function heapPerRun(backend, agent, runs) {
  const output = execFileSync(
    process.execPath,
    [
      "--expose-gc",
      fileURLToPath(new URL("./heap-probe.mjs", import.meta.url)),
      backend,
      agent,
      String(runs),
    ],
    { encoding: "utf8", env: { ...process.env, REDIS_URL } },
  );
  return JSON.parse(output.trim().split("\n").at(-1)).bytesPerRun;
}

function heap(backend, runs) {
  const tree = heapPerRun(backend, "parent", runs);
  const parked = heapPerRun(backend, "parked", runs);
  const waitingParent = tree - parked;
  return {
    waitingParentBytes: Math.round(waitingParent),
    parkedRunBytes: Math.round(parked),
    treeOfParentAndParkedChildBytes: Math.round(tree),
    ratio: round(waitingParent / parked),
    runs,
  };
}

export async function waitingParent({ heapRuns }) {
  return {
    redisBytes: await redisBytes(),
    heapPerRun: {
      memory: heap("memory", heapRuns),
      redis: heap("redis", heapRuns),
      target: "waiting parent ≤ parked run",
    },
  };
}
