// The RunStore role of every backend (records, summaries and indexes, fenced saves applied in the order issued), run on memory, Redis and a
// Redis Cluster by describeBackendContract.
import { describe, expect, it } from "vitest";
import type { RunBackend } from "../../../src/backend.js";
import type { RunRecord, RunRecordStatus, RunResult } from "../../../src/index.js";
import { parseListOptions } from "../../../src/store/run-query.js";
import { storedRun } from "../../support/run-records.js";
import type { BackendFactory } from "../backend-contract.js";
import { deferred, silent } from "../fixtures.js";
import { audit, listedIds, record, roleHarness } from "./role-harness.js";

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

    it("lists the runs created in a time range [since, until), paging inside it", async () => {
      const backend = await start();
      for (const [runId, at] of [
        ["a", 10],
        ["b", 20],
        ["c", 20],
        ["d", 30],
        ["e", 40],
      ] as const) {
        await backend.createRun(record(runId, at === 30 ? "running" : "queued", at));
      }
      expect(await listedIds(backend, { since: 20 })).toEqual(["e", "d", "c", "b"]);
      const until = parseListOptions({ until: 30 });
      expect(await listedIds(backend, until)).toEqual(["c", "b", "a"]);
      const range = parseListOptions({ since: 20, until: 40, limit: 2 });
      const first = await backend.listRuns(range);
      expect(first.runs.map((each) => each.runId)).toEqual(["d", "c"]);
      expect(first.nextCursor).not.toBeNull();
      const second = await backend.listRuns(
        parseListOptions({ since: 20, until: 40, limit: 2, cursor: first.nextCursor }),
      );
      expect(second.runs.map((each) => each.runId)).toEqual(["b"]);
      expect(second.nextCursor).toBeNull();
      // With a filter read from a session's index, and with nothing in range.
      expect(
        await listedIds(backend, {
          ...parseListOptions({ until: 40, since: 30 }),
          sessionId: "session-d",
        }),
      ).toEqual(["d"]);
      expect(
        await listedIds(backend, { ...parseListOptions({ until: 30 }), sessionId: "session-d" }),
      ).toEqual([]);
      expect(await listedIds(backend, { since: 41 })).toEqual([]);
      expect(await listedIds(backend, { ...until, status: "running" })).toEqual([]);
      expect(await listedIds(backend, { since: 30, status: "running" })).toEqual(["d"]);
    });

    it("searches by a run id prefix or an exact session id (q), with filters and pages", async () => {
      const backend = await start();
      await backend.createRun(storedRun("abc-1", { createdAt: 1 }));
      await backend.createRun(storedRun("abd-2", { createdAt: 2, status: "running" }));
      await backend.createRun(storedRun("abc-3", { createdAt: 3 }));
      await backend.createRun(storedRun("é-4", { createdAt: 4 }));
      await backend.createRun(storedRun("x-5", { createdAt: 5, sessionId: "ab" }));
      await backend.createRun(storedRun("x-6", { createdAt: 6, sessionId: "ab" }));
      const search = (options: Record<string, unknown>) =>
        listedIds(backend, parseListOptions(options));

      expect(await search({ q: "abc" })).toEqual(["abc-3", "abc-1"]);
      expect(await search({ q: "a" })).toEqual(["abc-3", "abd-2", "abc-1"]);
      expect(await search({ q: "abd-2" })).toEqual(["abd-2"]);
      expect(await search({ q: "é" })).toEqual(["é-4"]);
      expect(await search({ q: "nothing" })).toEqual([]);
      // An exact session id finds the session's runs, not the ids starting with it.
      expect(await search({ q: "ab" })).toEqual(["x-6", "x-5"]);
      expect(await search({ q: "ab", until: 6 })).toEqual(["x-5"]);
      expect(await search({ q: "a", status: "queued", since: 2 })).toEqual(["abc-3"]);
      expect(await search({ q: "a", agent: "someone-else" })).toEqual([]);
      const first = await backend.listRuns(parseListOptions({ q: "a", limit: 2 }));
      expect(first.runs.map((each) => each.runId)).toEqual(["abc-3", "abd-2"]);
      const next = await backend.listRuns(
        parseListOptions({ q: "a", limit: 2, cursor: first.nextCursor }),
      );
      expect(next).toEqual({
        runs: [expect.objectContaining({ runId: "abc-1" })],
        nextCursor: null,
      });
      expect(() => parseListOptions({ q: "a", sessionId: "ab" })).toThrow(/q: not with sessionId/);
    });

    it("moves a parent waiting for its children between the status indexes and counts", async () => {
      const backend = await start();
      const now = Date.now();
      await backend.createRun(record("parent", "queued", now));
      await backend.createRun(record("other", "queued", now));
      const lease = await backend.acquireLease("parent");
      if (!lease.acquired) throw new Error("expected the lease");
      const at = (status: RunRecordStatus, updatedAt: number): RunRecord => ({
        ...record("parent", status, now),
        phase: "dispatch",
        updatedAt,
      });
      await backend.saveRun("parent", lease.token, at("waiting", now + 1));
      expect(await listedIds(backend, { status: "waiting" })).toEqual(["parent"]);
      expect(await listedIds(backend, { status: "running" })).toEqual([]);
      expect(await listedIds(backend, { agent: "support", status: "waiting" })).toEqual(["parent"]);
      const [summary] = (await backend.listRuns({ limit: 1, status: "waiting" })).runs;
      expect(summary).toMatchObject({ runId: "parent", status: "waiting", phase: "dispatch" });
      expect(await backend.runStatus("parent")).toBe("waiting");
      expect((await backend.loadRun("parent"))?.status).toBe("waiting");
      const counts = async () => (await backend.overview({ window: "1h", now })).counts;
      expect(await counts()).toMatchObject({ queued: 1, running: 0, waiting: 1 });
      // Woken: its next save reads running again.
      await backend.saveRun("parent", lease.token, at("running", now + 2));
      expect(await listedIds(backend, { status: "waiting" })).toEqual([]);
      expect(await listedIds(backend, { status: "running" })).toEqual(["parent"]);
      expect(await counts()).toMatchObject({ queued: 1, running: 1, waiting: 0 });
    });

    it("keeps the overview's counters per time bucket as runs are created and saved", async () => {
      const backend = await start();
      const hour = Date.UTC(2026, 11, 6, 6);
      const minute = 60_000;
      const finish = async (
        runId: string,
        createdAt: number,
        shape: { status: RunResult["status"]; agent?: string; usage?: number[]; code?: string },
      ) => {
        const lease = await backend.acquireLease(runId);
        if (!lease.acquired) throw new Error("expected the lease");
        const [inputTokens = 0, outputTokens = 0, cacheReadTokens = 0, cacheWriteTokens = 0] =
          shape.usage ?? [];
        const result: RunResult = {
          runId,
          sessionId: `session-${runId}`,
          status: shape.status,
          output: null,
          error:
            shape.code === undefined
              ? null
              : { name: "ProviderError", code: shape.code, message: "no" },
          agent: shape.agent ?? "agent",
          pending: [],
          usage: { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens },
          iterations: 1,
          messages: [],
        };
        await backend.saveRun(
          runId,
          lease.token,
          {
            ...storedRun(runId, {
              createdAt,
              status: shape.status,
              agent: shape.agent ?? "support",
            }),
            result,
            updatedAt: createdAt + 7 * minute,
          },
          { release: true },
        );
      };
      const create = (runId: string, createdAt: number, agent = "support") =>
        backend.createRun(storedRun(runId, { createdAt, agent }));

      await create("taken", hour + minute);
      await create("done", hour + 2 * minute, "writer");
      await create("broken", hour + 3 * minute);
      await create("asking", hour + 4 * minute);
      await create("asked-long-ago", hour - 3 * 60 * minute);
      await create("last-week", hour - 2 * 24 * 60 * minute);
      const taken = await backend.acquireLease("taken");
      expect(taken.acquired).toBe(true);
      await finish("done", hour + 2 * minute, {
        status: "completed",
        agent: "writer",
        usage: [100, 20, 5, 3],
      });
      await finish("broken", hour + 3 * minute, {
        status: "failed",
        usage: [10, 1],
        code: "provider_error",
      });
      await finish("asking", hour + 4 * minute, { status: "awaiting_approval", usage: [7] });
      await finish("asked-long-ago", hour - 3 * 60 * minute, { status: "awaiting_approval" });

      const now = hour + 30 * minute;
      const approvals = { waiting: 2, oldestSince: hour - 3 * 60 * minute + 7 * minute };
      const counts = (some: Partial<Record<RunRecordStatus, number>>) => ({
        queued: 0,
        running: 0,
        waiting: 0,
        awaiting_approval: 0,
        paused: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
        ...some,
      });
      const writer = {
        runs: 1,
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 5,
        cacheWriteTokens: 3,
      };
      const support = (runs: number) => ({
        runs,
        inputTokens: 10,
        outputTokens: 1,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      });
      expect(await backend.overview({ window: "1h", now })).toEqual({
        counts: counts({ running: 1, completed: 1, failed: 1, awaiting_approval: 1 }),
        approvals,
        usage: { byAgent: { writer, support: support(3) } },
        failures: { byCode: { provider_error: 1 } },
      });
      const day = await backend.overview({ window: "24h", now });
      expect(day.counts).toEqual(
        counts({ running: 1, completed: 1, failed: 1, awaiting_approval: 2 }),
      );
      expect(day.usage.byAgent).toEqual({ writer, support: support(4) });
      const week = await backend.overview({ window: "7d", now });
      expect(week.counts).toEqual(
        counts({ queued: 1, running: 1, completed: 1, failed: 1, awaiting_approval: 2 }),
      );
      expect(week.usage.byAgent.support?.runs).toBe(5);
      // An hour later the first hour's runs are out of the last hour's window.
      expect((await backend.overview({ window: "1h", now: now + 60 * minute })).counts).toEqual(
        counts({}),
      );

      // A decided run waits no more: the oldest wait is the next one's.
      await finish("asked-long-ago", hour - 3 * 60 * minute, { status: "completed" });
      expect((await backend.overview({ window: "1h", now })).approvals).toEqual({
        waiting: 1,
        oldestSince: hour + 4 * minute + 7 * minute,
      });
    });

    it("finds the oldest wait by when runs parked, not when they were created", async () => {
      const backend = await start();
      const minute = 60_000;
      const start0 = Date.UTC(2026, 11, 6, 6);
      const park = async (runId: string, createdAt: number, parkedAt: number) => {
        await backend.createRun(storedRun(runId, { createdAt }));
        const lease = await backend.acquireLease(runId);
        if (!lease.acquired) throw new Error("expected the lease");
        const parked = storedRun(runId, { createdAt, status: "awaiting_approval" });
        await backend.saveRun(
          runId,
          lease.token,
          { ...parked, updatedAt: parkedAt },
          { release: true },
        );
      };
      // Seventy runs, more than one read of the waiting runs: the first sixty-nine created
      // first but parked last; the last one created parked before all of them.
      for (let at = 1; at < 70; at++) {
        await park(
          `late-${String(at).padStart(2, "0")}`,
          start0 + at * minute,
          start0 + 200 * minute,
        );
      }
      await park("early", start0 + 70 * minute, start0 + 71 * minute);
      const now = start0 + 300 * minute;
      expect((await backend.overview({ window: "24h", now })).approvals).toEqual({
        waiting: 70,
        oldestSince: start0 + 71 * minute,
      });
      // The run that waited longest is decided: the next oldest wait is the others'.
      const lease = await backend.acquireLease("early");
      if (!lease.acquired) throw new Error("expected the lease");
      await backend.saveRun(
        "early",
        lease.token,
        {
          ...storedRun("early", { createdAt: start0 + 70 * minute, status: "running" }),
          updatedAt: now,
        },
        { release: true },
      );
      expect((await backend.overview({ window: "24h", now })).approvals).toEqual({
        waiting: 69,
        oldestSince: start0 + 200 * minute,
      });
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

    it("deletes a finished run with every trace, keeps an unfinished one, and knows no unknown one", async () => {
      const backend = await start();
      await backend.createRun(record("done", "queued", 1));
      await backend.createRun(record("going", "queued", 2));
      const allow = { id: "d-1", decision: "allow" as const, decidedAt: 4 };
      expect(await backend.decide("done", 1, "call_1", allow, audit("allow", 4))).toBe(true);
      await finish(backend, record("done", "queued", 1), 5);
      expect(await backend.auditTrail("done")).toHaveLength(1);
      expect(await backend.checkpoints("done")).toHaveLength(1);

      expect(await backend.deleteRun("going")).toBe("unfinished");
      expect(await backend.deleteRun("done")).toBe("deleted");
      expect(await backend.deleteRun("done")).toBe("unknown");
      expect(await backend.deleteRun("never")).toBe("unknown");

      expect(await backend.loadRun("done")).toBeUndefined();
      expect(await backend.auditTrail("done")).toEqual([]);
      expect(await backend.checkpoints("done")).toEqual([]);
      expect(await listedIds(backend, {})).toEqual(["going"]);
      expect(await listedIds(backend, { sessionId: "session-done" })).toEqual([]);
      expect(await listedIds(backend, { status: "completed" })).toEqual([]);
      expect((await backend.loadRun("going"))?.status).toBe("queued");
      // Deleted, it is no longer there to prune.
      expect(await backend.pruneRuns(100)).toEqual({ deleted: 0, unreadable: 0 });
    });

    it("deletes a session's saved state, every agent's, extension's and key's, and no other session's", async () => {
      const backend = await start();
      const state = backend.extensionState;
      // Session ids that a glob or a careless split would confuse with each other.
      const sessions = ["s-1", 's-1"]', "s-*", "s-10"];
      for (const sessionId of sessions) {
        for (const [agent, extension, key] of [
          ["support", "memory", "notes"],
          ["ops", "audit", "s-1"],
        ] as const) {
          await state.set({ agent, extension, key, sessionId }, { canary: `${sessionId}/${key}` });
        }
      }

      expect(await backend.deleteSessionState("s-1")).toBe(2);
      expect(await backend.deleteSessionState("s-1")).toBe(0);
      expect(await backend.deleteSessionState("s-*")).toBe(2);

      const left = async (sessionId: string) =>
        state.get({ agent: "ops", extension: "audit", key: "s-1", sessionId });
      expect(await left("s-1")).toBeUndefined();
      expect(await left("s-*")).toBeUndefined();
      expect(await left('s-1"]')).toEqual({ canary: 's-1"]/s-1' });
      expect(await left("s-10")).toEqual({ canary: "s-10/s-1" });
      expect(
        await state.get({ agent: "support", extension: "memory", key: "notes", sessionId: "s-10" }),
      ).toEqual({ canary: "s-10/notes" });
    });

    // Only storage that can be edited from outside (Redis) can hold a corrupt summary.
    const { editStored } = factory;
    if (editStored !== undefined)
      it("prunes around a finished run whose summary is unreadable, counts it, and deletes it on request", async () => {
        const backend = await start();
        for (const [runId, createdAt] of [
          ["a", 1],
          ["bad", 2],
          ["c", 3],
        ] as const) {
          await backend.createRun(record(runId, "queued", createdAt));
          await finish(backend, record(runId, "queued", createdAt), 10 + createdAt);
        }
        await editStored("bad", "summary", () => "{not json");

        expect(await backend.pruneRuns(100)).toEqual({ deleted: 2, unreadable: 1 });
        expect(await backend.loadRun("a")).toBeUndefined();
        // Called again, it still does not throw and still reports the run.
        expect(await backend.pruneRuns(100)).toEqual({ deleted: 0, unreadable: 1 });

        expect(await backend.deleteRun("bad")).toBe("deleted");
        expect(await backend.loadRun("bad")).toBeUndefined();
        expect(await listedIds(backend, {})).toEqual([]);
        expect(await listedIds(backend, { sessionId: "session-bad" })).toEqual([]);
        expect(await backend.pruneRuns(100)).toEqual({ deleted: 0, unreadable: 0 });
      });

    if (editStored !== undefined)
      it("deletes an unfinished run whose record and summary are unreadable", async () => {
        const backend = await start();
        await backend.createRun(record("broken", "running", 1));
        // Working data of its third iteration: its count is in the record that cannot be read.
        const allow = { id: "d-1", decision: "allow" as const, decidedAt: 4 };
        expect(await backend.decide("broken", 3, "call_1", allow, audit("allow", 4))).toBe(true);
        await editStored("broken", "record", () => "{not json");
        await editStored("broken", "summary", () => "{not json");

        expect(await backend.deleteRun("broken")).toBe("deleted");
        expect(await backend.deleteRun("broken")).toBe("unknown");
        expect(await backend.decisions("broken", 3)).toEqual({});
        expect(await backend.auditTrail("broken")).toEqual([]);
        expect(await listedIds(backend, {})).toEqual([]);
        expect(await listedIds(backend, { status: "running" })).toEqual([]);
        expect(await listedIds(backend, { sessionId: "session-broken" })).toEqual([]);
        // The run id index of prefix searches (q) forgets it too.
        expect(await listedIds(backend, { q: "brok" })).toEqual([]);
      });
  });
}

/** Takes the run's lease and saves it completed at `at`, with an entry in its timeline. */
async function finish(backend: RunBackend, run: RunRecord, at: number): Promise<void> {
  const lease = await backend.acquireLease(run.runId);
  if (!lease.acquired) throw new Error("expected the lease");
  await backend.saveRun(
    run.runId,
    lease.token,
    {
      ...run,
      status: "completed",
      phase: "done",
      result: {
        runId: run.runId,
        sessionId: run.sessionId,
        status: "completed",
        output: "done",
        error: null,
        agent: run.agent,
        pending: [],
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        iterations: 1,
        messages: run.input.messages,
      },
      updatedAt: at,
    },
    { checkpoint: { at, phase: "done", status: "completed", iteration: 1 } },
  );
  await backend.releaseLease(run.runId, lease.token);
}
