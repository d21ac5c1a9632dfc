// A parent waiting for its children (SPEC §14) and the run reconciler (SPEC §8): its children
// are its liveness, so it is not stranded while one runs; one whose children all finished with
// no wake-up (the wake-up's job lost) is found and moved on, and finishes.
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunLink } from "../../src/backend.js";
import { Agent, AgentRuntime, redisBackend } from "../../src/index.js";
import { redisKeys } from "../../src/runtime/redis-keys.js";
import { findStrandedRuns } from "../../src/runtime/redis-stranded.js";
import type { RunBackend } from "../../src/store/backend.js";
import type { RunRecord } from "../../src/store/schemas.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { storedRun } from "../support/run-records.js";
import { silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function freshPrefix(): string {
  const prefix = uniquePrefix();
  cleanups.push(() => deletePrefix(prefix));
  return prefix;
}

/** `backend`, with the first step queued for `runId` lost (a job removed from the queue). */
function losingFirstStep(backend: RunBackend, runId: string): RunBackend {
  let lost = false;
  return new Proxy(backend, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      if (property !== "enqueueStep")
        return (value as (...args: unknown[]) => unknown).bind(target);
      return async (...args: Parameters<RunBackend["enqueueStep"]>) => {
        if (args[0] === runId && !lost) {
          lost = true;
          return;
        }
        return target.enqueueStep(...args);
      };
    },
  });
}

const link = (runId: string, createdAt: number): RunLink => ({
  runId,
  agent: "researcher",
  parentRunId: "parent",
  parentToolCallId: runId.slice("parent.".length),
  parentIteration: 1,
  rootRunId: "parent",
  depth: 1,
  createdAt,
});

describe("the run reconciler and waiting parents", () => {
  it("steps a parent whose last child's wake-up was lost, and it finishes", async () => {
    const prefix = freshPrefix();
    const researcher = new Agent({
      provider: new ScriptedProvider([textResponse("notes")], { loop: true }),
      config: { name: "researcher" },
      logger: silent,
    });
    const lead = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "research", input: { input: "otters" }, id: "c0" }]),
        textResponse("done"),
      ]),
      config: { name: "lead" },
      tools: [researcher.asTool({ name: "research", description: "Research" })],
      logger: silent,
    });
    const backend = redisBackend({
      url: redisUrl(),
      prefix,
      reconcileIntervalMs: 200,
      strandedAfterMs: 100,
    });
    const runtime = new AgentRuntime({
      agents: [lead, researcher],
      backend: losingFirstStep(backend, "parent"),
      logger: silent,
    });
    await runtime.start();
    cleanups.push(() => runtime.close({ timeoutMs: 2000 }));
    const handle = await runtime.submit("lead", "go", { runId: "parent" });
    const result = await handle.result();
    expect(result.status).toBe("completed");
    expect(result.output).toBe("done");
    expect((await runtime.handle("parent.c0").result()).output).toBe("notes");
  }, 30_000);

  it("leaves a parent alone while a child it waits for runs, and names what moves it on", async () => {
    const prefix = freshPrefix();
    const backend = redisBackend({ url: redisUrl(), prefix });
    await backend.start({ concurrency: 1, logger: silent });
    cleanups.push(() => backend.close({ timeoutMs: 1000 }));
    const redis = new Redis(redisUrl());
    cleanups.push(async () => {
      redis.disconnect();
    });
    const keys = redisKeys(prefix);
    const stranded = async () =>
      (await findStrandedRuns(redis, keys, { now: Date.now(), idleMs: 0, limit: 100 })).filter(
        (run) => run.runId === "parent",
      );
    /** Saves `runId` as `status` under a lease of its own, then gives the lease up. */
    const save = async (record: RunRecord, links: readonly RunLink[] = []) => {
      const lease = await backend.acquireLease(record.runId);
      if (!lease.acquired) throw new Error("expected the lease");
      if (links.length > 0) await backend.waitForChildren(record.runId, lease.token, links);
      await backend.saveRun(record.runId, lease.token, record);
      await backend.releaseLease(record.runId, lease.token);
    };
    // Saved a second ago: idle for a reconciler that waits 0 ms, not for one that waits a minute.
    const at = Date.now() - 1000;
    const running = link("parent.c0", 2);
    const unstored = link("parent.c1", 3);
    await backend.createRun(storedRun("parent", { createdAt: at }));
    await save(
      { ...storedRun("parent", { createdAt: at, status: "waiting" }), phase: "dispatch" },
      [running, unstored],
    );
    await backend.createRun(storedRun("parent.c0", { createdAt: 2 }));
    await save(storedRun("parent.c0", { createdAt: 2, status: "running" }));
    // A child it waits for still runs (stranded itself, by the rule for running runs).
    expect(await stranded()).toEqual([]);

    await save({ ...storedRun("parent.c0", { createdAt: 2, status: "completed" }), phase: "done" });
    // Its finished child did not wake it; the other was never stored.
    expect(await stranded()).toEqual([
      { runId: "parent", status: "waiting", updatedAt: at, wake: ["parent.c0", "parent"] },
    ]);

    await backend.childFinished(running);
    await backend.releaseChild(unstored);
    // It waits for none, and no wake-up came.
    expect(await stranded()).toEqual([
      { runId: "parent", status: "waiting", updatedAt: at, wake: ["parent"] },
    ]);
    // Not idle long enough: not stranded yet.
    const fresh = await findStrandedRuns(redis, keys, {
      now: Date.now(),
      idleMs: 60_000,
      limit: 100,
    });
    expect(fresh.map((run) => run.runId)).not.toContain("parent");
  });
});
