// list / get / prune and the audit trail (SPEC §8), run against every backend by
// describeBackendContract (memory-backend.test.ts and redis-backend.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import {
  ConfigError,
  type ListOptions,
  RunNotFoundError,
  type RunRecord,
  type RunResult,
  type RunSummary,
} from "../../src/index.js";
import { storedRun } from "../support/run-records.js";
import type { BackendFactory } from "./backend-contract.js";
import { approvalAgent, Runtimes, rejection } from "./fixtures.js";

const finalResult = (record: RunRecord, status: RunResult["status"]): RunResult => ({
  runId: record.runId,
  sessionId: record.sessionId,
  status,
  output: status === "completed" ? "done" : null,
  error:
    status === "failed"
      ? { name: "ProviderError", code: "provider_failed", message: "down" }
      : null,
  agent: record.agent,
  pending: [],
  usage: { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 },
  iterations: 2,
  messages: record.input.messages,
});

/** Newest first: later `createdAt` first, then the larger run id. */
const newestFirst = (records: readonly RunRecord[]) =>
  [...records]
    .sort((first, second) =>
      first.createdAt !== second.createdAt
        ? second.createdAt - first.createdAt
        : first.runId < second.runId
          ? 1
          : -1,
    )
    .map((record) => record.runId);

export function describeRunStoreContract(name: string, factory: BackendFactory): void {
  describe(`the run store of ${name}: list, get, prune`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    /** A started runtime without workers on a fresh backend, and the records it was given. */
    const storeWith = async (records: readonly RunRecord[]) => {
      const backend = factory.create();
      const runtime = await runtimes.start([], backend, { workers: false });
      for (const record of records) expect(await backend.createRun(record)).toBe(true);
      return { backend, runtime };
    };

    /** Every page of `list(options)`, following `nextCursor`. */
    const allPages = async (
      list: (options: ListOptions) => Promise<{ runs: RunSummary[]; nextCursor: string | null }>,
      options: ListOptions,
    ) => {
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await list({ ...options, ...(cursor === undefined ? {} : { cursor }) });
        pages.push(page.runs.map((run) => run.runId));
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      return pages;
    };

    it("pages through many runs newest first, ties by run id, each run once", async () => {
      // 130 runs over 40 distinct milliseconds (many share their createdAt), in three statuses:
      // the pages merge three indexes, ties included.
      const statuses = ["queued", "running", "awaiting_approval"] as const;
      const records = Array.from({ length: 130 }, (_, index) =>
        storedRun(`run-${String((index * 37) % 130).padStart(3, "0")}`, {
          createdAt: 1_000 + (index % 40),
          status: statuses[index % 3] as RunRecord["status"],
          agent: index % 2 === 0 ? "support" : "billing",
        }),
      );
      const { runtime } = await storeWith(records);

      const pages = await allPages((options) => runtime.list(options), { limit: 50 });

      expect(pages.map((page) => page.length)).toEqual([50, 50, 30]);
      expect(pages.flat()).toEqual(newestFirst(records));
      const support = await allPages((options) => runtime.list(options), {
        limit: 7,
        agent: "support",
      });
      expect(support.flat()).toEqual(newestFirst(records.filter((run) => run.agent === "support")));
      const firstPage = await runtime.list();
      expect(firstPage.runs).toHaveLength(50);
      expect(firstPage.runs.map((run) => run.runId)).toEqual(pages[0]);
    });

    it("filters by status, agent and session, alone and combined", async () => {
      const statuses = ["queued", "running", "completed", "awaiting_approval"] as const;
      const records = Array.from({ length: 48 }, (_, index) =>
        storedRun(`run-${String(index).padStart(2, "0")}`, {
          createdAt: 5_000 + index,
          agent: index % 3 === 0 ? "billing" : "support",
          sessionId: `session-${index % 4}`,
          status: statuses[index % statuses.length] as RunRecord["status"],
        }),
      );
      const { runtime } = await storeWith(records);
      const expected = (keep: (record: RunRecord) => boolean) => newestFirst(records.filter(keep));
      const listed = async (options: ListOptions) =>
        (await allPages((each) => runtime.list(each), { limit: 5, ...options })).flat();

      expect(await listed({ status: "completed" })).toEqual(
        expected((record) => record.status === "completed"),
      );
      expect(await listed({ agent: "billing" })).toEqual(
        expected((record) => record.agent === "billing"),
      );
      expect(await listed({ sessionId: "session-2" })).toEqual(
        expected((record) => record.sessionId === "session-2"),
      );
      expect(await listed({ agent: "support", status: "queued" })).toEqual(
        expected((record) => record.agent === "support" && record.status === "queued"),
      );
      expect(await listed({ sessionId: "session-1", status: "running" })).toEqual(
        expected((record) => record.sessionId === "session-1" && record.status === "running"),
      );
      expect(await listed({ sessionId: "session-0", agent: "billing", status: "queued" })).toEqual(
        expected(
          (record) =>
            record.sessionId === "session-0" &&
            record.agent === "billing" &&
            record.status === "queued",
        ),
      );
      expect(await listed({ agent: "nobody" })).toEqual([]);
      expect(await listed({ sessionId: "session-2", status: "failed" })).toEqual([]);
    });

    it("keeps a cursor's place while new runs arrive; they head the next first page", async () => {
      const records = Array.from({ length: 30 }, (_, index) =>
        storedRun(`old-${String(index).padStart(2, "0")}`, {
          createdAt: 100 + Math.floor(index / 3),
        }),
      );
      const { backend, runtime } = await storeWith(records);
      const first = await runtime.list({ limit: 10 });

      const arrivals = Array.from({ length: 7 }, (_, index) =>
        storedRun(`new-${index}`, { createdAt: 500 + index }),
      );
      for (const record of arrivals) await backend.createRun(record);
      const rest = await allPages((options) => runtime.list(options), {
        limit: 10,
        cursor: first.nextCursor ?? "",
      });

      expect([...first.runs.map((run) => run.runId), ...rest.flat()]).toEqual(newestFirst(records));
      expect((await runtime.list({ limit: 10 })).runs.map((run) => run.runId)).toEqual(
        newestFirst([...records, ...arrivals]).slice(0, 10),
      );
    });

    it("moves a run between status indexes as it is saved, with a fresh summary", async () => {
      const queued = storedRun("run-1", { createdAt: 10, agent: "billing", sessionId: "s-1" });
      const { backend, runtime } = await storeWith([queued, storedRun("run-0", { createdAt: 5 })]);
      const lease = await backend.acquireLease("run-1");
      if (!lease.acquired) throw new Error("expected the lease");

      const failed: RunRecord = {
        ...queued,
        status: "failed",
        phase: "done",
        result: finalResult(queued, "failed"),
        updatedAt: 20,
      };
      await backend.saveRun("run-1", lease.token, failed);

      expect((await runtime.list({ status: "queued" })).runs.map((run) => run.runId)).toEqual([
        "run-0",
      ]);
      const expectedSummary: RunSummary = {
        runId: "run-1",
        agent: "billing",
        sessionId: "s-1",
        status: "failed",
        phase: "done",
        pending: [],
        iterations: 2,
        usage: { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 },
        error: { name: "ProviderError", code: "provider_failed", message: "down" },
        createdAt: 10,
        updatedAt: 20,
      };
      expect(await runtime.list({ status: "failed" })).toEqual({
        runs: [expectedSummary],
        nextCursor: null,
      });
      expect((await runtime.list({ agent: "billing", status: "failed" })).runs).toEqual([
        expectedSummary,
      ]);
      expect((await runtime.list({ agent: "billing", status: "queued" })).runs).toEqual([]);
      expect((await runtime.list({ sessionId: "s-1" })).runs).toEqual([expectedSummary]);
    });

    it("refuses a bad cursor, limit or filter with ConfigError naming it", async () => {
      const { runtime } = await storeWith([storedRun("run-1", { createdAt: 1 })]);
      const forged = Buffer.from(JSON.stringify([1, "x", 2])).toString("base64url");
      for (const options of [
        { cursor: "not-a-cursor" },
        { cursor: forged },
        { limit: 0 },
        { limit: 501 },
        { status: "sleeping" },
      ]) {
        const error = await rejection(runtime.list(options as ListOptions));
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toContain(Object.keys(options)[0]);
      }
      expect((await runtime.list({ limit: 500 })).runs).toHaveLength(1);
    });

    it("prunes the runs that finished before a time, with their index entries", async () => {
      const records = ["old-done", "old-failed", "new-done", "still-queued"].map((runId, index) =>
        storedRun(runId, { createdAt: index + 1, sessionId: "shared" }),
      );
      const { backend, runtime } = await storeWith(records);
      const finish = async (record: RunRecord, status: RunResult["status"], at: number) => {
        const lease = await backend.acquireLease(record.runId);
        if (!lease.acquired) throw new Error("expected the lease");
        await backend.saveRun(record.runId, lease.token, {
          ...record,
          status,
          phase: "done",
          result: finalResult(record, status),
          updatedAt: at,
        });
        await backend.releaseLease(record.runId, lease.token);
      };
      const [oldDone, oldFailed, newDone] = records as [RunRecord, RunRecord, RunRecord];
      await finish(oldDone, "completed", 1_000);
      await finish(oldFailed, "failed", 1_500);
      await finish(newDone, "completed", 3_000);

      expect(await runtime.prune({ finishedBefore: 2_000 })).toEqual({ deleted: 2, unreadable: 0 });

      expect(await backend.loadRun("old-done")).toBeUndefined();
      expect(await backend.loadRun("old-failed")).toBeUndefined();
      expect(await rejection(runtime.get("old-done"))).toBeInstanceOf(RunNotFoundError);
      const left = ["still-queued", "new-done"];
      expect((await runtime.list()).runs.map((run) => run.runId)).toEqual(left);
      expect((await runtime.list({ sessionId: "shared" })).runs.map((run) => run.runId)).toEqual(
        left,
      );
      expect((await runtime.list({ status: "completed" })).runs.map((run) => run.runId)).toEqual([
        "new-done",
      ]);
      expect((await runtime.list({ status: "failed" })).runs).toEqual([]);
      expect(await runtime.prune({ finishedBefore: 2_000 })).toEqual({ deleted: 0, unreadable: 0 });
      expect(await runtime.prune({ finishedBefore: 10_000 })).toEqual({
        deleted: 1,
        unreadable: 0,
      });
      expect((await runtime.list()).runs.map((run) => run.runId)).toEqual(["still-queued"]);
      const bad = await rejection(runtime.prune({} as { finishedBefore: number }));
      expect(bad).toBeInstanceOf(ConfigError);
    });

    it("gets a run with its messages and the audit trail of every decision", async () => {
      const { agent } = approvalAgent();
      const backend: RunBackend = factory.create();
      const runtime = await runtimes.start([agent], backend);
      const handle = await runtime.submit("ops", "old.log", { sessionId: "ops-session" });
      const parked = await handle.result();
      expect(parked.status).toBe("awaiting_approval");

      const waiting = await runtime.get(handle.runId);
      expect(waiting).toMatchObject({
        runId: handle.runId,
        agent: "ops",
        sessionId: "ops-session",
        status: "awaiting_approval",
        pending: parked.pending,
        iterations: 1,
        messages: parked.messages,
        decisions: [],
      });

      await runtime.approve(handle.runId, "call_1", { by: "ops-lead", reason: "old logs go" });
      const result = await handle.result();
      expect(result.status).toBe("completed");
      await rejection(runtime.deny(handle.runId, "call_1", { by: "someone-else" }));

      const detail = await runtime.get(handle.runId);
      expect(detail.status).toBe("completed");
      expect(detail.messages).toEqual(result.messages);
      expect(detail.usage).toEqual(result.usage);
      expect(detail.iterations).toBe(result.iterations);
      expect(detail.decisions).toEqual([
        {
          toolCallId: "call_1",
          name: "delete_file",
          decision: "allow",
          reason: "old logs go",
          by: "ops-lead",
          inputHash: expect.stringMatching(/^[0-9a-f]{64}$/),
          at: expect.any(Number),
        },
      ]);
      expect(detail.decisions[0]?.at).toBeGreaterThanOrEqual(detail.createdAt);
      const summary = (await runtime.list({ sessionId: "ops-session" })).runs[0];
      // Beyond the summary, messages and decisions, a detail has only its timeline (additive).
      const { checkpoints, modelCalls, toolCalls } = detail;
      expect(checkpoints?.length).toBeGreaterThan(0);
      expect({
        ...summary,
        messages: detail.messages,
        decisions: detail.decisions,
        checkpoints,
        modelCalls,
        toolCalls,
      }).toEqual(detail);

      const unknown = await rejection(runtime.get("no-such-run"));
      expect(unknown).toBeInstanceOf(RunNotFoundError);
    });
  });
}
