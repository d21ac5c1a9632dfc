// The JobQueue role of every backend (run-step and tool jobs, submitting runs with their first
// step), run on memory, Redis and a Redis Cluster by describeBackendContract.
import { describe, expect, it } from "vitest";
import type { RunLink } from "../../../src/backend.js";
import type { RunEvent, RunRecord, RunResult, StepJob, ToolJob } from "../../../src/index.js";
import type { ApprovalNoticeJob } from "../../../src/store/approval-request.js";
import { storedRun } from "../../support/run-records.js";
import type { BackendFactory } from "../backend-contract.js";
import { collect, silent } from "../fixtures.js";
import { record, roleHarness } from "./role-harness.js";

export function describeJobQueueContract(name: string, factory: BackendFactory): void {
  describe(`JobQueue of ${name}`, () => {
    const { started } = roleHarness(factory);

    /** A backend whose workers hand every job they get to `steps` and `tools`. */
    const working = async (seen: { steps: StepJob[]; tools: ToolJob[] }, wake: () => void) => {
      const backend = factory.create();
      started.push(backend);
      await backend.start({
        concurrency: 4,
        logger: silent,
        processors: {
          step: async (job) => {
            seen.steps.push(job);
            wake();
            return undefined;
          },
          tool: async (job) => {
            seen.tools.push(job);
            wake();
            return undefined;
          },
        },
      });
      return backend;
    };

    it("delivers step and tool jobs to this process's workers, as they were queued", async () => {
      const seen = { steps: [] as StepJob[], tools: [] as ToolJob[] };
      let wake = () => {};
      const both = new Promise<void>((resolve) => {
        wake = () => {
          if (seen.steps.length > 0 && seen.tools.length > 0) resolve();
        };
      });
      const backend = await working(seen, () => wake());
      await backend.enqueueStep("run", { priority: 3, giveUp: "its attempts ran out" });
      const tool: ToolJob = {
        runId: "run",
        iteration: 2,
        toolCallId: "call_1",
        agent: "support",
        tool: "search",
        attempt: 1,
      };
      await backend.enqueueTool(tool);
      await both;

      expect(seen.steps).toEqual([{ runId: "run", priority: 3, giveUp: "its attempts ran out" }]);
      expect(seen.tools).toEqual([tool]);
    });

    it("submits runs with their first steps, and reports the ids that exist already", async () => {
      const seen = { steps: [] as StepJob[], tools: [] as ToolJob[] };
      let wake = () => {};
      const firstSteps = new Promise<void>((resolve) => {
        wake = () => {
          if (new Set(seen.steps.map((job) => job.runId)).size === 3) resolve();
        };
      });
      const backend = await working(seen, () => wake());
      expect(await backend.submitRun(record("a", "queued", 1))).toBe(true);
      expect(await backend.submitRun(record("a", "queued", 5))).toBe(false);
      expect(
        await backend.submitRuns([record("b", "queued", 2), record("a", "queued", 6)]),
      ).toEqual(["a"]);
      expect(await backend.submitRuns([record("c", "queued", 3)])).toEqual([]);
      await firstSteps;

      // An existing run keeps its record: nothing of the second submit is written.
      expect((await backend.loadRun("a"))?.createdAt).toBe(1);
      expect(new Set(seen.steps.map((job) => job.runId))).toEqual(new Set(["a", "b", "c"]));
    });

    it("retries an approval notice that failed, once queued per call and round", async () => {
      const backend = factory.create();
      started.push(backend);
      const attempts: Array<{ job: ApprovalNoticeJob; gaveUp: string | undefined }> = [];
      let wake = () => {};
      await backend.start({
        concurrency: 4,
        logger: silent,
        processors: {
          step: async () => undefined,
          tool: async () => undefined,
          notice: async (job, delivery) => {
            attempts.push({ job, gaveUp: delivery.gaveUp });
            wake();
            if (attempts.length === 1) throw new Error("the receiver answered 503");
          },
        },
      });
      const job: ApprovalNoticeJob = {
        round: "0:call_1",
        request: {
          runId: "run",
          toolCallId: "call_1",
          agent: "ops",
          name: "delete_file",
          input: { path: "a.log" },
          reason: "deleting needs a person",
          since: 1,
          rootRunId: "run",
        },
      };
      const twice = new Promise<void>((resolve) => {
        wake = () => {
          if (attempts.length >= 2) resolve();
        };
      });
      const retry = { attempts: 3, backoffMs: 20 };
      await Promise.all([backend.enqueueNotice(job, retry), backend.enqueueNotice(job, retry)]);
      await twice;
      // Delivered again after the failure, then done: no third attempt, no second job.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(attempts).toEqual([
        { job, gaveUp: undefined },
        { job, gaveUp: undefined },
      ]);
    });

    it("tells each child it stores on its parent's log in the same write, once, and live", async () => {
      const backend = factory.create();
      started.push(backend);
      await backend.start({ concurrency: 1, logger: silent });
      const linkOf = (call: string, parentRunId = "lead"): RunLink => ({
        runId: `${parentRunId}.${call}`,
        agent: "researcher",
        parentRunId,
        parentToolCallId: call,
        parentIteration: 1,
        rootRunId: parentRunId,
        depth: 1,
        createdAt: 2,
      });
      const child = (call: string, parentRunId = "lead"): RunRecord => ({
        ...storedRun(`${parentRunId}.${call}`, { createdAt: 2, agent: "researcher" }),
        parentRunId,
        parentToolCallId: call,
        rootRunId: parentRunId,
      });
      // Linked first, as the step or tool job that starts a child links it (stored only so).
      const links = [...["c0", "c1", "c2", "c3"].map((call) => linkOf(call)), linkOf("c0", "gone")];
      for (const each of links) await backend.linkChild(each);
      const startedEvent = (call: string): RunEvent => ({
        type: "child_started",
        childRunId: `lead.${call}`,
        agent: "researcher",
        toolCallId: call,
      });
      await backend.createRun({ ...record("lead", "waiting", 1), agent: "lead" });
      const live = collect(backend.events("lead", { live: true }));

      expect(await backend.submitRuns([child("c0"), child("c1")])).toEqual([]);
      // Submitted again (a step or tool job delivered again): stored before, told before.
      expect(await backend.submitRun(child("c0"))).toBe(false);
      expect(await backend.submitRuns([child("c1"), child("c2")])).toEqual(["lead.c1"]);
      expect(await backend.createRun(child("c2"))).toBe(false);
      expect(await backend.createRun(child("c3"))).toBe(true);
      // A child whose parent is gone tells no log (nor makes one).
      expect(await backend.submitRun(child("c0", "gone"))).toBe(true);

      const told = ["c0", "c1", "c2", "c3"].map(startedEvent);
      expect((await backend.readEvents("lead", 0, 50)).events).toEqual(told);
      expect((await backend.readEvents("gone", 0, 50)).events).toEqual([]);
      const keys = (await factory.storedKeys?.()) ?? [];
      // No event list (a Redis parent's run hash holds the run tree's field of its linked child).
      expect(keys.filter((key) => /:events:gone$/.test(key))).toEqual([]);
      await backend.publish("lead", { type: "result", result: finalOf("lead") });
      expect(await live).toEqual([...told, { type: "result", result: finalOf("lead") }]);
    });
  });
}

/** A completed run's result, which ends its event stream. */
const finalOf = (runId: string): RunResult => ({
  runId,
  sessionId: `session-${runId}`,
  status: "completed",
  output: "done",
  error: null,
  agent: "lead",
  pending: [],
  usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
  iterations: 1,
  messages: [],
});
