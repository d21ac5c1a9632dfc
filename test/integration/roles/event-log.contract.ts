// The EventLog role of every backend (live events, in the order they are issued, ending after the result), run on memory, Redis and a
// Redis Cluster by describeBackendContract.
import { describe, expect, it } from "vitest";
import type { RunEvent, RunResult } from "../../../src/index.js";
import type { BackendFactory } from "../backend-contract.js";
import { collect } from "../fixtures.js";
import { record, roleHarness } from "./role-harness.js";

export function describeEventLogContract(name: string, factory: BackendFactory): void {
  describe(`EventLog of ${name}`, () => {
    const { start } = roleHarness(factory);

    it("applies a run's appends before the saves issued after them when it publishes in order", async () => {
      const backend = await start();
      expect(backend.publishesInOrder === true).toBe(factory.publishesInOrder ?? true);
      if (backend.publishesInOrder !== true) return;
      await backend.createRun(record("run", "queued", 1));
      const lease = await backend.acquireLease("run");
      if (!lease.acquired) throw new Error("expected the lease");
      const deltas: RunEvent[] = Array.from({ length: 20 }, (_, index) => ({
        type: "text_delta",
        text: `${index} `,
      }));
      const saved: RunEvent = { type: "tool_start", toolCall: { id: "c", name: "t", input: {} } };
      // Each issued before the replies of the ones before it: nothing waits in between.
      const appends = deltas.map((delta) => backend.publish("run", delta));
      const save = backend.saveRun("run", lease.token, record("run", "running", 1), {
        events: [saved],
      });
      await Promise.all([...appends, save]);

      expect((await backend.readEvents("run", 0, 50)).events).toEqual([...deltas, saved]);
    });

    it("appends a call's start events with its start mark, and none when it was marked before", async () => {
      const backend = await start();
      const call = { id: "call_1", name: "search", input: { query: "x" } };
      const started: RunEvent[] = [{ type: "tool_start", toolCall: call }];
      expect(await backend.markCallStarted("run", 1, "call_1", started)).toBe(true);
      expect(await backend.markCallStarted("run", 1, "call_1", started)).toBe(false);
      expect(await backend.markCallStarted("run", 1, "call_2")).toBe(true);

      expect((await backend.readEvents("run", 0, 10)).events).toEqual(started);
    });

    it("replays a run's events from the start and ends after the final result", async () => {
      const backend = await start();
      const call = { id: "call_1", name: "search", input: { query: "x" } };
      const finalResult: RunResult = {
        runId: "run",
        sessionId: "s",
        status: "completed",
        output: "done",
        error: null,
        agent: "agent",
        pending: [],
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        iterations: 1,
        messages: [],
      };
      const reading = collect(backend.events("run"));
      await backend.publish("run", { type: "tool_start", toolCall: call });
      await backend.publish("run", {
        type: "result",
        result: { ...finalResult, status: "awaiting_approval", output: null },
      });
      await backend.publish("run", { type: "result", result: finalResult });
      await backend.publish("run", { type: "text_delta", text: "after the end" });

      const expected: RunEvent[] = [
        { type: "tool_start", toolCall: call },
        { type: "result", result: { ...finalResult, status: "awaiting_approval", output: null } },
        { type: "result", result: finalResult },
      ];
      expect(await reading).toEqual(expected);
      expect(await collect(backend.events("run"))).toEqual(expected);
    });
  });
}
