// A durable run's timeline (issue 10, SPEC §12): what `runtime.get()` shows of every save, every
// provider call and every tool call, run against every backend by describeBackendContract.
import { afterEach, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import { LeaseLostError } from "../../src/index.js";
import { storedRun } from "../support/run-records.js";
import type { BackendFactory } from "./backend-contract.js";
import {
  approvalAgent,
  Runtimes,
  readerAgent,
  readerUsage,
  rejection,
  silent,
} from "./fixtures.js";

export function describeTimelineContract(name: string, factory: BackendFactory): void {
  describe(`the timeline of a run in ${name}`, () => {
    const runtimes = new Runtimes();
    const started: RunBackend[] = [];
    afterEach(async () => {
      await runtimes.closeAll();
      await Promise.all(started.splice(0).map((backend) => backend.close({ timeoutMs: 1000 })));
      await factory.cleanup();
    });

    it("shows each provider call's own tokens, each save, and tool results raw and processed", async () => {
      const runtime = await runtimes.start([readerAgent()], factory.create());
      const handle = await runtime.submit("reader", "Read the page.");
      expect((await handle.result()).status).toBe("completed");

      const detail = await runtime.get(handle.runId);
      expect(detail.modelCalls).toEqual([
        expect.objectContaining({ iteration: 1, model: "model-large", usage: readerUsage.first }),
        expect.objectContaining({ iteration: 2, model: "model-small", usage: readerUsage.second }),
      ]);
      expect(detail.modelCalls?.[0]?.stopReason).toBe("tool_use");
      expect(detail.modelCalls?.[1]?.stopReason).toBe("end_turn");
      expect(
        detail.checkpoints?.map(({ phase, status, iteration }) => [phase, status, iteration]),
      ).toEqual([
        ["afterLlm", "running", 1],
        ["dispatch", "running", 1],
        ["compose", "running", 1],
        ["afterLlm", "running", 2],
        ["done", "completed", 2],
      ]);
      const times = detail.checkpoints?.map((checkpoint) => checkpoint.at) ?? [];
      expect(times).toEqual([...times].sort((first, second) => first - second));
      expect(detail.checkpoints?.at(-1)?.at).toBe(detail.updatedAt);

      const raw = "<html>a long page at https://example.test/a</html>";
      expect(detail.toolCalls).toEqual([
        {
          iteration: 1,
          toolCallId: "call_1",
          name: "fetch_page",
          input: { url: "https://example.test/a" },
          raw: { content: raw, isError: false },
          result: { content: `summary of ${raw.length} characters`, isError: false },
          at: detail.checkpoints?.[2]?.at,
        },
        {
          iteration: 1,
          toolCallId: "call_2",
          name: "word_count",
          input: { text: "three short words" },
          raw: { content: "3", isError: false },
          result: { content: "3", isError: false },
          at: detail.checkpoints?.[2]?.at,
        },
      ]);
    });

    it("shows a parked save, and a denied call with no raw result", async () => {
      const { agent } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("ops", "old.log");
      expect((await handle.result()).status).toBe("awaiting_approval");
      const parked = await runtime.get(handle.runId);
      expect(parked.checkpoints?.at(-1)).toMatchObject({
        phase: "awaitingApproval",
        status: "awaiting_approval",
        iteration: 1,
      });
      expect(parked.toolCalls).toEqual([
        expect.objectContaining({ toolCallId: "call_1", result: null, raw: null, at: null }),
      ]);

      await runtime.deny(handle.runId, "call_1", { by: "ops-lead", reason: "keep it" });
      expect((await handle.result()).status).toBe("completed");
      const detail = await runtime.get(handle.runId);
      expect(detail.toolCalls).toEqual([
        expect.objectContaining({
          toolCallId: "call_1",
          name: "delete_file",
          raw: null,
          result: expect.objectContaining({ isError: true }),
          at: expect.any(Number),
        }),
      ]);
      expect(detail.modelCalls?.map((call) => call.iteration)).toEqual([1, 2]);
    });

    it("appends a checkpoint only with a save that is accepted, and prunes it with the run", async () => {
      const backend = factory.create();
      started.push(backend);
      await backend.start({ concurrency: 1, logger: silent });
      await backend.createRun(storedRun("run", { createdAt: 1 }));
      const first = await backend.acquireLease("run");
      if (!first.acquired) throw new Error("expected the lease");
      const checkpoint = (phase: string, at: number) =>
        ({ at, phase, status: "running", iteration: 1 }) as const;
      await backend.saveRun(
        "run",
        first.token,
        { ...storedRun("run", { createdAt: 1, status: "running" }), updatedAt: 2 },
        { checkpoint: checkpoint("afterLlm", 2) },
      );
      await backend.releaseLease("run", first.token);
      const second = await backend.acquireLease("run");
      if (!second.acquired) throw new Error("expected the lease");
      const stale = await rejection(
        backend.saveRun("run", first.token, storedRun("run", { createdAt: 1, status: "running" }), {
          checkpoint: checkpoint("dispatch", 3),
        }),
      );
      expect(stale).toBeInstanceOf(LeaseLostError);
      expect(await backend.checkpoints("run")).toEqual([checkpoint("afterLlm", 2)]);

      await backend.saveRun(
        "run",
        second.token,
        { ...storedRun("run", { createdAt: 1, status: "completed" }), phase: "done", updatedAt: 4 },
        { checkpoint: { ...checkpoint("done", 4), status: "completed" } },
      );
      expect((await backend.checkpoints("run")).map((each) => each.phase)).toEqual([
        "afterLlm",
        "done",
      ]);
      expect(await backend.pruneRuns(10)).toEqual({ deleted: 1, unreadable: 0 });
      expect(await backend.checkpoints("run")).toEqual([]);
    });
  });
}
