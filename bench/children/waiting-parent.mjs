// bench:children, part "waiting": what a waiting parent keeps, next to a parked run (target ≤).
//  - Redis bytes (MEMORY USAGE … SAMPLES 0) of one parent's own keys while its one child waits
//    for a person, next to one parked run's (the same call, of a plain tool that asks first).
//    `runStoreBytes`: the run store's keys; `withQueueHistoryBytes` adds the finished BullMQ
//    jobs the run left (kept by the queues up to `keepCompletedJobs` whatever the runs, so at
//    scale they are no run's own).
//  - Heap of this process per waiting parent (a tree of parent + parked child, less a parked
//    run) next to a parked run's, with N of each, on memory and on Redis (workers in this
//    process).

import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  memoryBackend,
  PermissionManager,
  redisBackend,
  tool,
} from "../../dist/index.js";
import { toolCallResponse } from "../../dist/testing.js";
import { connect, deletePrefix, REDIS_URL, uniquePrefix } from "../lib/redis.mjs";
import { round } from "../lib/stats.mjs";

const logger = pino({ level: "silent" });

/** A forced full GC, with or without --expose-gc. */
function collect() {
  if (globalThis.gc === undefined) {
    setFlagsFromString("--expose-gc");
    globalThis.gc = runInNewContext("gc");
  }
  globalThis.gc();
  globalThis.gc();
}

const settledHeap = () => {
  collect();
  return process.memoryUsage().heapUsed;
};

/**
 * A model whose every answer calls `child` (each run here makes one call: it parks or waits on
 * it). Not a ScriptedProvider, which keeps every request: heap that is no run's.
 */
const callsChild = {
  name: "calls-child",
  complete: async () => toolCallResponse([{ name: "child", input: { input: "x" }, id: "call_1" }]),
};

/** A plain tool named `name` that asks a person first: a run calling it parks. */
const askingTool = (name) =>
  tool({
    name,
    description: "Asks first",
    input: z.object({ input: z.string() }),
    handler: () => "x",
  });

/** The agents: `parked` (parks on its call), `parent` (calls `parked` as an agent tool). */
function agents() {
  const permissions = () => new PermissionManager({ rules: [{ tool: "child", decision: "ask" }] });
  const parked = new Agent({
    provider: callsChild,
    config: { name: "parked" },
    tools: [askingTool("child")],
    permissions: permissions(),
    logger,
  });
  const parent = new Agent({
    provider: callsChild,
    config: { name: "parent" },
    tools: [parked.asTool({ name: "child", description: "Child" })],
    logger,
  });
  return [parent, parked];
}

/** Waits until `count` runs are parked (awaiting approval). */
async function parkedRuns(runtime, count) {
  for (let tries = 0; tries < 3000; tries++) {
    let listed = 0;
    let cursor;
    do {
      const page = await runtime.list({ status: "awaiting_approval", limit: 500, cursor });
      listed += page.runs.length;
      cursor = page.nextCursor;
    } while (cursor);
    if (listed >= count) return;
    await sleep(20);
  }
  throw new Error(`${count} runs never parked`);
}

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

/** Heap per run of `count` runs of `agent` once parked (their trees, for a parent). */
async function heapPerRun(backendOf, agent, count) {
  const runtime = new AgentRuntime({ agents: agents(), backend: backendOf(), logger });
  await runtime.start();
  try {
    // A warm-up tree and parked run: code and caches are in place before the baseline.
    await runtime.submit("parent", "warm");
    await runtime.submit("parked", "warm");
    await parkedRuns(runtime, 2);
    await sleep(200);
    const before = settledHeap();
    for (let index = 0; index < count; index++) await runtime.submit(agent, `go ${index}`);
    await parkedRuns(runtime, count + 2);
    await sleep(500);
    return (settledHeap() - before) / count;
  } finally {
    await runtime.close({ timeoutMs: 5000 });
  }
}

async function heap(backendOf, count) {
  const tree = await heapPerRun(backendOf, "parent", count);
  const parked = await heapPerRun(backendOf, "parked", count);
  const waitingParent = tree - parked;
  return {
    waitingParentBytes: Math.round(waitingParent),
    parkedRunBytes: Math.round(parked),
    treeOfParentAndParkedChildBytes: Math.round(tree),
    ratio: round(waitingParent / parked),
    runs: count,
  };
}

export async function waitingParent({ heapRuns }) {
  const prefixes = [];
  const redisOf = () => {
    const prefix = uniquePrefix("children-heap");
    prefixes.push(prefix);
    return redisBackend({ url: REDIS_URL, prefix });
  };
  const bytes = await redisBytes();
  const heapFigures = {
    memory: await heap(() => memoryBackend(), heapRuns),
    redis: await heap(redisOf, heapRuns),
    target: "waiting parent ≤ parked run",
  };
  const redis = connect();
  for (const prefix of prefixes) await deletePrefix(redis, prefix);
  redis.disconnect();
  return { redisBytes: bytes, heapPerRun: heapFigures };
}
