// bench:children — runs of runs (SPEC §14), side by side in one run, median of 5 rounds:
//  1. fan-out: one parent whose first turn calls an agent tool 100 times (zero-latency model),
//     time to the parent's result, next to 100 independent runs of the child agent submitted
//     with submitMany (target ≤ 1.3×), on memory and on Redis;
//  2. a waiting parent's Redis bytes (its child stuck) next to a parked run's (target ≤).
// CPU of this process (the only one: the runtime's workers run in it) per part.
// Options: --children 100 --rounds 5 --parts fanout,waiting (all unless given).
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  memoryBackend,
  PermissionManager,
  redisBackend,
  tool,
} from "../dist/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../dist/testing.js";
import { connect, deletePrefix, memoryByKind, REDIS_URL, uniquePrefix } from "./lib/redis.mjs";
import { median, now, option, round } from "./lib/stats.mjs";

const CHILDREN = option("children", 100);
const ROUNDS = option("rounds", 5);
const ALL_PARTS = ["fanout", "waiting"];
const PARTS = new Set(partsOption() ?? ALL_PARTS);
const logger = pino({ level: "silent" });

function agents(children) {
  const researcher = new Agent({
    provider: new ScriptedProvider([textResponse("notes")], { loop: true }),
    config: { name: "researcher" },
    logger,
  });
  const calls = Array.from({ length: children }, (_, index) => ({
    name: "research",
    input: { input: `topic ${index}` },
    id: `c${index}`,
  }));
  const lead = new Agent({
    provider: new ScriptedProvider([toolCallResponse(calls), textResponse("done")], { loop: true }),
    config: { name: "lead" },
    tools: [researcher.asTool({ name: "research", description: "Research" })],
    logger,
  });
  return [lead, researcher];
}

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
  const runtime = new AgentRuntime({ agents: agents(CHILDREN), backend: backendOf(), logger });
  await runtime.start();
  const rounds = { tree: [], flat: [], treeCpu: [], flatCpu: [] };
  try {
    // One warm-up of each, then alternating rounds.
    await (await runtime.submit("lead", "warm up")).result();
    await Promise.all(
      (await runtime.submitMany("researcher", ["a", "b"])).map((each) => each.result()),
    );
    for (let round_ = 0; round_ < ROUNDS; round_++) {
      const tree = await timed(async () => {
        const result = await (await runtime.submit("lead", "go")).result();
        if (result.status !== "completed") throw new Error(`parent ended ${result.status}`);
      });
      const inputs = Array.from({ length: CHILDREN }, (_, index) => `topic ${index}`);
      const flat = await timed(async () => {
        const handles = await runtime.submitMany("researcher", inputs);
        await Promise.all(handles.map((each) => each.result()));
      });
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

/** Redis bytes of one waiting parent (its one child stuck) and of one parked run. */
async function waitingBytes() {
  const stuck = {
    name: "stuck",
    complete: (_request, options) =>
      new Promise((_resolve, reject) =>
        options?.signal?.addEventListener("abort", () => reject(options.signal.reason)),
      ),
  };
  const child = new Agent({ provider: stuck, config: { name: "child" }, logger });
  const parent = new Agent({
    provider: new ScriptedProvider([toolCallResponse([{ name: "child", input: { input: "x" } }])]),
    config: { name: "parent" },
    tools: [child.asTool({ description: "Child" })],
    logger,
  });
  const parked = new Agent({
    provider: new ScriptedProvider([toolCallResponse([{ name: "child", input: { input: "x" } }])]),
    config: { name: "parked" },
    // The same call as the parent's, of a plain tool that asks a person first.
    tools: [
      tool({
        name: "child",
        description: "Child",
        input: z.object({ input: z.string() }),
        handler: () => "x",
      }),
    ],
    permissions: new PermissionManager({ rules: [{ tool: "child", decision: "ask" }] }),
    logger,
  });
  const redis = connect();
  const measure = async (agentList, name, ready) => {
    const prefix = uniquePrefix(`children-${name}`);
    const runtime = new AgentRuntime({
      agents: agentList,
      backend: redisBackend({ url: REDIS_URL, prefix }),
      logger,
    });
    await runtime.start();
    try {
      const handle = await runtime.submit(agentList[0].name, "go");
      await ready(runtime, handle);
      const runKeys = await memoryByKind(redis, prefix);
      // Only the run's own keys (not the queues' or the child's): by kind, for this run id.
      const own = {};
      let bytes = 0;
      for (const key of await redis.keys(`${prefix}:*`)) {
        if (!key.includes(handle.runId) || key.includes(`${handle.runId}.`)) continue;
        const used = Number(await redis.memory("USAGE", key, "SAMPLES", "0"));
        own[key.slice(prefix.length + 1).replace(handle.runId, "<run>")] = used;
        bytes += used;
      }
      return { runBytes: bytes, byKey: own, allKeysBytes: runKeys.bytes };
    } finally {
      await runtime.close({ timeoutMs: 2000 });
      await deletePrefix(redis, prefix);
    }
  };
  const waiting = await measure([parent, child], "waiting", async (runtime, handle) => {
    for (let tries = 0; tries < 200; tries++) {
      const page = await runtime.list({ parentRunId: handle.runId, status: "running" });
      if (page.runs.length === 1) return;
      await sleep(20);
    }
    throw new Error("the child never ran");
  });
  const parkedRun = await measure([parked], "parked", async (_runtime, handle) => {
    const result = await handle.result();
    if (result.status !== "awaiting_approval") throw new Error(`parked run ended ${result.status}`);
  });
  redis.disconnect();
  return {
    waitingParentBytes: waiting.runBytes,
    parkedRunBytes: parkedRun.runBytes,
    ratio: round(waiting.runBytes / parkedRun.runBytes),
    target: "≤ 1",
    waitingByKey: waiting.byKey,
    parkedByKey: parkedRun.byKey,
  };
}

const redisCleanup = connect();
const prefixes = [];
const output = { benchmark: "children", children: CHILDREN, rounds: ROUNDS };
if (PARTS.has("fanout")) {
  output.fanOut = {
    memory: await fanOut(() => memoryBackend()),
    redis: await fanOut(() => {
      const prefix = uniquePrefix("children-fanout");
      prefixes.push(prefix);
      return redisBackend({ url: REDIS_URL, prefix });
    }),
  };
}
if (PARTS.has("waiting")) output.waitingParent = await waitingBytes();
for (const prefix of prefixes) await deletePrefix(redisCleanup, prefix);
redisCleanup.disconnect();
console.log(JSON.stringify(output, null, 2));
