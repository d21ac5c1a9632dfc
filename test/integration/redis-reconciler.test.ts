// The run reconciler (SPEC §8, issue #13 item 11): a run whose queued job was removed (one
// click in a queue dashboard) is found and stepped again, and finishes.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { STEP_QUEUE } from "../../src/runtime/redis-keys.js";
import { makeAgent, oneToolModel, searchTool, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function runtimeOn(prefix: string) {
  const search = searchTool();
  const runtime = new AgentRuntime({
    agents: [makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] })],
    backend: redisBackend({
      url: redisUrl(),
      prefix,
      reconcileIntervalMs: 200,
      strandedAfterMs: 100,
    }),
    logger: silent,
  });
  cleanups.push(() => runtime.close({ timeoutMs: 1000 }));
  return { runtime, search };
}

describe("the run reconciler", () => {
  it("steps a queued run whose job was removed from the queue, and it finishes", async () => {
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const submitter = runtimeOn(prefix).runtime;
    await submitter.start({ workers: false });
    const handle = await submitter.submit("support", "order 5");

    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const steps = new Queue(STEP_QUEUE, { connection, prefix });
    cleanups.push(async () => {
      await steps.close();
      connection.disconnect();
    });
    const waiting = await steps.getWaiting();
    expect(waiting).toHaveLength(1);
    await waiting[0]?.remove();
    expect(await steps.getWaitingCount()).toBe(0);

    const worker = runtimeOn(prefix);
    await worker.runtime.start();
    const result = await worker.runtime.handle(handle.runId).result();
    expect(result.status).toBe("completed");
    expect(result.output).toBe("Answer: Results for order 5");
    expect(worker.search.calls.get("order 5")).toBe(1);
  }, 30_000);
});
