// Redis out of memory (SPEC §8, issue #34 item 6): `store_full`, nothing half written. Redis
// refuses a script at its first write that may grow memory when it is out of memory, and lets a
// script that has written already run to its end: a script is applied whole or not at all. A
// worker's save refused under OOM leaves the run's record, conversation and indexes as they were.
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { redisBackend } from "../../src/index.js";
import { storedRun } from "../support/run-records.js";
import { silent } from "./fixtures.js";
import { startRedisServer } from "./redis.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("a save when Redis is out of memory", () => {
  it("rejects with store_full and leaves the run as it was stored", async () => {
    const server = await startRedisServer(["--maxmemory-policy", "noeviction"]);
    cleanups.push(() => server.stop());
    const backend = redisBackend({ url: server.url, prefix: "hx" });
    await backend.start({ concurrency: 1, logger: silent });
    cleanups.push(() => backend.close({ timeoutMs: 1000 }));
    const admin = new Redis(server.url);
    cleanups.push(async () => {
      admin.disconnect();
    });
    const queued = storedRun("run", { createdAt: 1 });
    await backend.createRun(queued);
    const lease = await backend.acquireLease("run");
    if (!lease.acquired) throw new Error("expected the lease");
    const before = await backend.loadRun("run");

    await admin.config("SET", "maxmemory", "1");
    // As a worker saves: a message appended to the stored one, an event, and a status change.
    const grown = {
      ...queued,
      status: "running" as const,
      updatedAt: 2,
      input: {
        ...queued.input,
        messages: [
          ...queued.input.messages,
          { role: "user" as const, content: [{ type: "text" as const, text: "more" }] },
        ],
      },
    };
    await expect(
      backend.saveRun("run", lease.token, grown, {
        storedMessages: 1,
        events: [{ type: "text_delta", text: "x" }],
      }),
    ).rejects.toMatchObject({ name: "BackendError", code: "store_full" });
    await admin.config("SET", "maxmemory", "0");

    expect(await backend.loadRun("run")).toEqual(before);
    // Taking the lease made it `running`; the refused save left it there, in that index.
    expect(before?.status).toBe("running");
    const listed = (await backend.listRuns({ limit: 10, status: "running" })).runs;
    expect(listed.map((run) => run.runId)).toEqual(["run"]);
  }, 30_000);
});
