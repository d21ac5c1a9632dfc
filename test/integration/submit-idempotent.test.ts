// Nothing a caller was told failed may run twice (SPEC §8, issue #34 item 3): a submit that
// rejects carries the run id it tried (`error.runId`), and a submit with `{ runId }` of a run
// that exists returns that run, never a second one.
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentRuntime, memoryBackend, redisBackend } from "../../src/index.js";
import type { RunBackend } from "../../src/store/backend.js";
import { harnessRejection } from "../support/rejection.js";
import { makeAgent, oneToolModel, searchTool, silent } from "./fixtures.js";
import {
  deletePrefix,
  type RedisServer,
  redisUrl,
  requireRedis,
  startRedisServer,
  uniquePrefix,
} from "./redis.js";

const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function runtimeOn(backend: RunBackend, options: { workers?: boolean } = {}) {
  const search = searchTool();
  const runtime = new AgentRuntime({
    agents: [
      makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] }),
      makeAgent("billing", { provider: oneToolModel("search"), tools: [search.tool] }),
    ],
    backend,
    logger: silent,
  });
  await runtime.start(options);
  cleanups.push(() => runtime.close({ timeoutMs: 1000 }));
  return { runtime, search };
}

async function ownRedis(): Promise<RedisServer> {
  const server = await startRedisServer(["--maxmemory-policy", "noeviction"]);
  cleanups.push(() => server.stop());
  return server;
}

const backends: Array<[string, () => RunBackend]> = [
  ["memory", () => memoryBackend()],
  [
    "redis",
    () => {
      const prefix = uniquePrefix();
      cleanups.push(() => deletePrefix(prefix));
      return redisBackend({ url: redisUrl(), prefix });
    },
  ],
];

describe.each(backends)("submit with { runId } (%s)", (_name, backendOf) => {
  it("stores one run for the same id submitted twice, and its handler runs once", async () => {
    const { runtime, search } = await runtimeOn(backendOf());
    const first = await runtime.submit("support", "order 7", { runId: "order-7" });
    expect(first.runId).toBe("order-7");
    expect((await first.result()).output).toBe("Answer: Results for order 7");

    const again = await runtime.submit("support", "order 7", { runId: "order-7" });
    expect(again.runId).toBe("order-7");
    expect((await again.result()).output).toBe("Answer: Results for order 7");
    const page = await runtime.list({ limit: 10 });
    expect(page.runs.map((run) => run.runId)).toEqual(["order-7"]);
    expect(search.calls.get("order 7")).toBe(1);
  });

  it("refuses the id of another agent's run, and names the id in the error", async () => {
    const { runtime } = await runtimeOn(backendOf());
    await (await runtime.submit("support", "order 8", { runId: "order-8" })).result();
    const error = await harnessRejection(
      runtime.submit("billing", "order 8", { runId: "order-8" }),
    );
    expect(error).toMatchObject({ code: "input_invalid", runId: "order-8" });
    expect(error.message).toContain('agent "support"');
    expect((await runtime.list({ limit: 10 })).runs).toHaveLength(1);
  });

  it("refuses an empty runId and a runId given to submitMany", async () => {
    const { runtime } = await runtimeOn(backendOf());
    await expect(runtime.submit("support", "x", { runId: "" })).rejects.toMatchObject({
      code: "config_invalid",
    });
    await expect(runtime.submitMany("support", ["x"], { runId: "one" })).rejects.toMatchObject({
      code: "config_invalid",
    });
    expect((await runtime.list({ limit: 10 })).runs).toHaveLength(0);
  });

  it("gives every rejected submit the run id it tried", async () => {
    const { runtime } = await runtimeOn(backendOf());
    const error = await harnessRejection(runtime.submit("nobody", "x"));
    expect(error.code).toBe("config_invalid");
    expect(error.runId).toEqual(expect.any(String));
    const chosen = await harnessRejection(runtime.submit("nobody", "x", { runId: "mine" }));
    expect(chosen.runId).toBe("mine");
  });
});

describe("a submit that Redis answers too late (CLIENT PAUSE)", () => {
  it("rejects with the run id, and a retry with it gives the one run, its handler run once", async () => {
    const server = await ownRedis();
    const prefix = "hx";
    const submitter = await runtimeOn(
      redisBackend({ url: server.url, prefix, commandTimeoutMs: 300 }),
      { workers: false },
    );
    const worker = await runtimeOn(redisBackend({ url: server.url, prefix }));
    // Only the submits go through the submitter's 300 ms command timeout; results and lists are
    // read through the worker's runtime, which a busy host cannot time out so soon.
    const warmUp = await submitter.runtime.submit("support", "order 1");
    expect((await worker.runtime.handle(warmUp.runId).result()).status).toBe("completed");

    const admin = new Redis(server.url);
    cleanups.push(async () => {
      admin.disconnect();
    });
    // Every client waits 1.5 s: the submit's commands reach Redis, but after its timeout.
    await admin.client("PAUSE", 1500, "ALL");
    const error = await harnessRejection(submitter.runtime.submit("support", "order 2"));
    expect(error.code).toBe("backend_unavailable");
    expect(error.runId).toEqual(expect.any(String));
    const runId = error.runId ?? "";

    // What the issue found: Redis runs the submit's commands once the pause ends, so the run the
    // caller was told failed is stored (and would run) all the same.
    for (;;) {
      const stored = await submitter.runtime.get(runId).then(
        (run) => run.runId,
        () => undefined,
      );
      if (stored === runId) break;
    }

    // The caller retries as told: with the id, and gets that run, not a second one.
    let handle: Awaited<ReturnType<AgentRuntime["submit"]>> | undefined;
    while (handle === undefined) {
      try {
        handle = await submitter.runtime.submit("support", "order 2", { runId });
      } catch (retryError) {
        expect(retryError).toMatchObject({ code: "backend_unavailable", runId });
      }
    }
    expect(handle.runId).toBe(runId);
    expect((await worker.runtime.handle(runId).result()).output).toBe(
      "Answer: Results for order 2",
    );
    const runs = (await worker.runtime.list({ limit: 10 })).runs.map((run) => run.runId);
    expect(runs.sort()).toEqual([runId, warmUp.runId].sort());
    expect(worker.search.calls.get("order 2")).toBe(1);
  }, 30_000);
});

describe("a submit when Redis is out of memory", () => {
  it("rejects with store_full and writes nothing of the run; a retry once memory is freed runs it", async () => {
    const server = await ownRedis();
    const prefix = "hx";
    const { runtime, search } = await runtimeOn(redisBackend({ url: server.url, prefix }));
    const admin = new Redis(server.url);
    cleanups.push(async () => {
      admin.disconnect();
    });
    await admin.config("SET", "maxmemory", "1");

    const error = await harnessRejection(runtime.submit("support", "order 3"));
    expect(error).toMatchObject({ name: "BackendError", code: "store_full", fault: "store" });
    const runId = error.runId ?? "";
    expect(runId).not.toBe("");
    // Nothing half written: no key, index entry or queued job names the run.
    const keys = await admin.keys(`${prefix}:*`);
    const naming: string[] = [];
    for (const key of keys) {
      if (key.includes(runId)) naming.push(key);
      const type = await admin.type(key);
      if (type === "zset" && (await admin.zscore(key, runId)) !== null) naming.push(key);
      if (type === "hash" && JSON.stringify(await admin.hgetall(key)).includes(runId)) {
        naming.push(key);
      }
      if (type === "list" && JSON.stringify(await admin.lrange(key, 0, -1)).includes(runId)) {
        naming.push(key);
      }
    }
    expect(naming).toEqual([]);

    await admin.config("SET", "maxmemory", "0");
    const handle = await runtime.submit("support", "order 3", { runId });
    expect((await handle.result()).output).toBe("Answer: Results for order 3");
    expect(search.calls.get("order 3")).toBe(1);
  }, 30_000);
});
