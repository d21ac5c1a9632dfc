// The CallLedger role of every backend (call attempts, raw results, interruptions and decisions), run on memory, Redis and a
// Redis Cluster by describeBackendContract.
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../../src/index.js";
import type { BackendFactory } from "../backend-contract.js";
import { audit, record, roleHarness } from "./role-harness.js";

export function describeCallLedgerContract(name: string, factory: BackendFactory): void {
  describe(`CallLedger of ${name}`, () => {
    const { start } = roleHarness(factory);

    it("marks a call attempt started once, and records attempts waiting for a person, with why", async () => {
      const backend = await start();
      expect(await backend.markCallStarted("run", 1, "call_1")).toBe(true);
      expect(await backend.markCallStarted("run", 1, "call_1")).toBe(false);
      expect(await backend.markCallStarted("run", 1, "call_1#1")).toBe(true);
      expect(await backend.markCallStarted("run", 2, "call_1")).toBe(true);
      expect(await backend.markCallStarted("other", 1, "call_1")).toBe(true);
      expect(await backend.interruptedCalls("run", 1)).toEqual(new Map());

      await backend.markCallInterrupted("run", 1, "call_1", "a crash");
      await backend.markCallInterrupted("run", 1, "call_1", "the policy asks: refunds");

      expect(await backend.interruptedCalls("run", 1)).toEqual(
        new Map([["call_1", "the policy asks: refunds"]]),
      );
      expect(await backend.interruptedCalls("run", 2)).toEqual(new Map());
      // An interrupted attempt stays started: a later delivery of it recovers again.
      expect(await backend.markCallStarted("run", 1, "call_1")).toBe(false);
    });

    it("marks a call attempt started with a tool job's read, unless the run has no use for it", async () => {
      const backend = await start();
      await backend.createRun(record("run", "running", 1));
      expect((await backend.openToolCall("run", 1, "call_1", "call_1")).started).toBe(true);
      expect((await backend.openToolCall("run", 1, "call_1", "call_1")).started).toBe(false);
      expect(await backend.markCallStarted("run", 1, "call_1")).toBe(false);
      expect((await backend.openToolCall("run", 1, "call_1", "call_1#1")).started).toBe(true);
      // A read that does not ask marks nothing.
      expect((await backend.openToolCall("run", 1, "call_3")).started).toBeUndefined();
      expect(await backend.markCallStarted("run", 1, "call_3")).toBe(true);

      // Committed, cancelled, finished or unknown: no mark is tried, none is left.
      await backend.commitRaw("run", 1, { toolCallId: "call_2", content: "ok", isError: false });
      expect((await backend.openToolCall("run", 1, "call_2", "call_2")).started).toBeUndefined();
      expect(await backend.markCallStarted("run", 1, "call_2")).toBe(true);
      await backend.createRun(record("cancelled", "running", 1));
      await backend.requestCancel("cancelled");
      const cancelled = await backend.openToolCall("cancelled", 1, "call_1", "call_1");
      expect(cancelled).toMatchObject({ cancelRequested: true });
      expect(cancelled.started).toBeUndefined();
      expect(await backend.markCallStarted("cancelled", 1, "call_1")).toBe(true);
      await backend.createRun(record("done", "completed", 1));
      expect((await backend.openToolCall("done", 1, "call_1", "call_1")).started).toBeUndefined();
      expect(await backend.markCallStarted("done", 1, "call_1")).toBe(true);
      const unknown = await backend.openToolCall("nope", 1, "call_1", "call_1");
      expect(unknown).toEqual({ run: undefined, committed: false, cancelRequested: false });
    });

    it("appends a tool job's events with its commit, whether or not the commit wins", async () => {
      const backend = await start();
      await backend.createRun(record("run", "running", 1));
      const call = { id: "call_1", name: "search", input: { query: "x" } };
      const first: RunEvent[] = [{ type: "tool_start", toolCall: call }];
      const again: RunEvent[] = [{ type: "tool_start", toolCall: { ...call, input: {} } }];
      const result = { toolCallId: "call_1", content: "found", isError: false };
      expect(await backend.commitRaw("run", 1, result, first)).toBe(true);
      expect(await backend.commitRaw("run", 1, { ...result, content: "late" }, again)).toBe(false);
      expect(await backend.commitRaw("run", 1, { ...result, toolCallId: "call_2" })).toBe(true);

      expect(await backend.rawResults("run", 1)).toEqual({
        call_1: result,
        call_2: { ...result, toolCallId: "call_2" },
      });
      expect((await backend.readEvents("run", 0, 10)).events).toEqual([...first, ...again]);
    });

    it("keeps decisions per call attempt", async () => {
      const backend = await start();
      const allow = { id: "d-1", decision: "allow" as const, decidedAt: 1 };
      const deny = { id: "d-2", decision: "deny" as const, decidedAt: 2 };
      expect(await backend.decide("run", 1, "call_1", allow, audit("allow", 1))).toBe(true);
      expect(await backend.decide("run", 1, "call_1#1", deny, audit("deny", 2))).toBe(true);
      expect(await backend.decisions("run", 1)).toEqual({ call_1: allow, "call_1#1": deny });
    });

    it("keeps the first raw result and the first decision of a call", async () => {
      const backend = await start();
      const first = { toolCallId: "call_1", content: "first", isError: false };
      expect(await backend.commitRaw("run", 1, first)).toBe(true);
      expect(await backend.commitRaw("run", 1, { ...first, content: "second" })).toBe(false);
      expect(await backend.commitRaw("run", 2, { ...first, content: "next round" })).toBe(true);
      expect(await backend.rawResults("run", 1)).toEqual({ call_1: first });
      expect(await backend.rawResults("run", 2)).toEqual({
        call_1: { ...first, content: "next round" },
      });

      const allow = { id: "d-1", decision: "allow" as const, by: "a", decidedAt: 1 };
      expect(await backend.decide("run", 1, "call_1", allow, audit("allow", 1))).toBe(true);
      expect(
        await backend.decide(
          "run",
          1,
          "call_1",
          { id: "d-2", decision: "deny", decidedAt: 2 },
          audit("deny", 2),
        ),
      ).toBe(false);
      // Our own write, re-sent: it wins again, and joins the audit trail once.
      expect(await backend.decide("run", 1, "call_1", allow, audit("allow", 1))).toBe(true);
      expect(await backend.decisions("run", 1)).toEqual({ call_1: allow });
      expect(await backend.auditTrail("run")).toEqual([audit("allow", 1)]);
      expect(await backend.auditTrail("other")).toEqual([]);
      expect(await backend.decisions("run", 2)).toEqual({});
    });
  });
}
