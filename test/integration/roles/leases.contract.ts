// The Leases role of every backend (one holder at a time, fencing tokens, wake-ups and cancel requests), run on memory, Redis and a
// Redis Cluster by describeBackendContract.
import { describe, expect, it } from "vitest";
import { LeaseLostError } from "../../../src/index.js";
import type { BackendFactory } from "../backend-contract.js";
import { rejection } from "../fixtures.js";
import { listedIds, record, roleHarness } from "./role-harness.js";

export function describeLeasesContract(name: string, factory: BackendFactory): void {
  describe(`Leases of ${name}`, () => {
    const { start } = roleHarness(factory);

    it("fences writes: a lease holder that lost the lease cannot save", async () => {
      const backend = await start();
      await backend.createRun(record("run", "queued", 1));
      const first = await backend.acquireLease("run");
      if (!first.acquired) throw new Error("expected the lease");
      const busy = await backend.acquireLease("run");
      expect(busy.acquired).toBe(false);
      await backend.saveRun("run", first.token, record("run", "running", 1));
      expect(await backend.releaseLease("run", first.token)).toEqual({ wake: true });
      expect(await backend.releaseLease("run", first.token)).toEqual({ wake: false });

      const second = await backend.acquireLease("run");
      if (!second.acquired) throw new Error("expected the lease");
      expect(second.token).toBeGreaterThan(first.token);
      const stale = await rejection(
        backend.saveRun("run", first.token, record("run", "failed", 1)),
      );
      expect(stale).toBeInstanceOf(LeaseLostError);
      expect(await backend.renewLease("run", first.token)).toBe(false);
      expect(await backend.renewLease("run", second.token)).toBe(true);
      expect((await backend.loadRun("run"))?.status).toBe("running");
      expect(await listedIds(backend, { status: "running" })).toEqual(["run"]);
      expect(await listedIds(backend, { status: "queued" })).toEqual([]);

      await backend.requestCancel("run");
      expect(await backend.saveRun("run", second.token, record("run", "running", 1))).toEqual({
        cancelRequested: true,
      });
    });

    it("renews many leases in one call: each still held is extended, each lost is named", async () => {
      const backend = await start();
      const tokens = new Map<string, number>();
      for (const runId of ["a", "b", "c"]) {
        await backend.createRun(record(runId, "queued", 1));
        const lease = await backend.acquireLease(runId);
        if (!lease.acquired) throw new Error("expected the lease");
        tokens.set(runId, lease.token);
      }
      const held = (runId: string) => ({ runId, token: tokens.get(runId) ?? -1 });
      // b is given up and taken again: its first token no longer holds it.
      await backend.releaseLease("b", held("b").token);
      const retaken = await backend.acquireLease("b");
      if (!retaken.acquired) throw new Error("expected the lease");

      expect(await backend.renewLeases([held("a"), held("b"), held("c")])).toEqual([
        true,
        false,
        true,
      ]);
      expect(await backend.renewLeases([{ runId: "b", token: retaken.token }])).toEqual([true]);
      expect(await backend.renewLeases([{ runId: "ghost", token: 1 }])).toEqual([false]);
      expect(await backend.renewLeases([])).toEqual([]);
      // Renewed leases are still held: another worker is refused them.
      expect((await backend.acquireLease("a")).acquired).toBe(false);
      expect((await backend.acquireLease("c")).acquired).toBe(false);
    });

    it("keeps who asked first to cancel a run, and stores nothing for an unknown run", async () => {
      const backend = await start();
      await backend.createRun(record("run", "queued", 1));
      expect(await backend.cancelledBy("run")).toBeUndefined();

      await backend.requestCancel("run", "ops-lead");
      await backend.requestCancel("run", "second-asker");
      await backend.requestCancel("ghost", "ops-lead");

      expect(await backend.cancelRequested("run")).toBe(true);
      expect(await backend.cancelledBy("run")).toBe("ops-lead");
      expect(await backend.loadRun("ghost")).toBeUndefined();
      expect(await listedIds(backend, {})).toEqual(["run"]);
    });

    it("turns a queued run running as a worker takes its lease, before any save", async () => {
      const backend = await start();
      await backend.createRun(record("run", "queued", 1));
      await backend.createRun(record("other", "queued", 2));
      const stop = new AbortController();
      const changes = (await backend.watchRuns(stop.signal))[Symbol.asyncIterator]();
      const lease = await backend.acquireLease("run");
      if (!lease.acquired) throw new Error("expected the lease");

      expect((await backend.loadRun("run"))?.status).toBe("running");
      if (lease.opened !== undefined) expect(lease.opened.record?.status).toBe("running");
      expect(await listedIds(backend, { status: "running" })).toEqual(["run"]);
      expect(await listedIds(backend, { status: "queued" })).toEqual(["other"]);
      expect(await listedIds(backend, { agent: "support", status: "running" })).toEqual(["run"]);
      expect(await listedIds(backend, {})).toEqual(["other", "run"]);
      // On a Cluster, the two creations' announcements can still be on their way across the
      // cluster bus when the subscription is made: the one that matters is the lease's.
      let announced = await changes.next();
      while (!announced.done && announced.value.status === "queued") {
        announced = await changes.next();
      }
      expect(announced.done ? undefined : announced.value).toMatchObject({
        runId: "run",
        status: "running",
        createdAt: 1,
      });
      stop.abort();

      // Taking the lease of a running run changes nothing; a later save moves it on as before.
      await backend.releaseLease("run", lease.token);
      const again = await backend.acquireLease("run");
      if (!again.acquired) throw new Error("expected the lease");
      await backend.saveRun("run", again.token, record("run", "completed", 1));
      expect(await listedIds(backend, { status: "running" })).toEqual([]);
      expect(await listedIds(backend, { status: "completed" })).toEqual(["run"]);
    });

    it("gives the lease up with a save that asks to, saying whether a wake-up was left", async () => {
      const backend = await start();
      await backend.createRun(record("run", "queued", 1));
      const first = await backend.acquireLease("run");
      if (!first.acquired) throw new Error("expected the lease");
      expect((await backend.acquireLease("run")).acquired).toBe(false);
      const saved = await backend.saveRun("run", first.token, record("run", "running", 1), {
        release: true,
      });
      expect(saved).toEqual({ cancelRequested: false, released: { wake: true } });

      const second = await backend.acquireLease("run");
      if (!second.acquired) throw new Error("expected the lease: the save gave it up");
      const quiet = await backend.saveRun("run", second.token, record("run", "running", 1), {
        release: true,
      });
      expect(quiet.released).toEqual({ wake: false });
      expect((await backend.acquireLease("run")).acquired).toBe(true);
    });
  });
}
