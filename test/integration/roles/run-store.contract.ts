// The RunStore role of every backend (records, summaries and indexes, fenced saves applied in the order issued), run on memory, Redis and a
// Redis Cluster by describeBackendContract.
import { describe, expect, it } from "vitest";
import type { BackendFactory } from "../backend-contract.js";
import { deferred, silent } from "../fixtures.js";
import { listedIds, record, roleHarness } from "./role-harness.js";

export function describeRunStoreContract(name: string, factory: BackendFactory): void {
  describe(`RunStore of ${name}`, () => {
    const { started, start } = roleHarness(factory);

    it("stores records once and lists them by status, newest first", async () => {
      const backend = await start();
      expect(await backend.createRun(record("b", "queued", 2))).toBe(true);
      expect(await backend.createRun(record("a", "queued", 1))).toBe(true);
      expect(await backend.createRun(record("c", "running", 3))).toBe(true);
      expect(await backend.createRun(record("a", "running", 9))).toBe(false);

      expect(await listedIds(backend, { status: "queued" })).toEqual(["b", "a"]);
      expect(await listedIds(backend, {})).toEqual(["c", "b", "a"]);
      expect(await backend.loadRun("a")).toEqual(record("a", "queued", 1));
      expect(await backend.loadRun("missing")).toBeUndefined();
    });

    it("applies a run's saves in the order issued, and queues tool jobs right behind a save and those before it", async () => {
      const backend = factory.create();
      started.push(backend);
      const found = deferred<{ toolCallId: string; updatedAt: number | undefined }>();
      await backend.start({
        concurrency: 1,
        logger: silent,
        processors: {
          step: async () => undefined,
          tool: async (job) => {
            const run = await backend.loadRun(job.runId);
            found.resolve({ toolCallId: job.toolCallId, updatedAt: run?.updatedAt });
            return undefined;
          },
        },
      });
      await backend.createRun(record("run", "queued", 1));
      const lease = await backend.acquireLease("run");
      if (!lease.acquired) throw new Error("expected the lease");

      // Issued one after the other, each before the one before it resolved.
      const saves = [2, 3, 4].map((updatedAt) =>
        backend.saveRun("run", lease.token, { ...record("run", "running", 1), updatedAt }),
      );
      await Promise.all(saves);
      expect((await backend.loadRun("run"))?.updatedAt).toBe(4);

      // A save that queues tool jobs, issued right behind two saves not yet resolved.
      const behind = [5, 6].map((updatedAt) =>
        backend.saveRun("run", lease.token, { ...record("run", "running", 1), updatedAt }),
      );
      await backend.saveRun(
        "run",
        lease.token,
        { ...record("run", "running", 1), phase: "dispatch", updatedAt: 7 },
        {
          release: true,
          thenTools: [
            { runId: "run", iteration: 1, toolCallId: "call_1", agent: "support", tool: "search" },
          ],
        },
      );
      await Promise.all(behind);
      // The job finds the run as the save left it, after every save issued before it.
      expect(await found.promise).toEqual({ toolCallId: "call_1", updatedAt: 7 });
    });
  });
}
