// Nothing decided may stall (SPEC §8, issue #34 item 2): `approve` stores the decision, then
// queues the step that applies it as a separate command. When that step is lost (the approving
// process died between the two, or the job was removed in a queue view), the reconciler finds
// the decided run waiting with no step and steps it, and `harnessx doctor` reports it.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "../../src/cli/doctor.js";
import { AgentRuntime, type RunSummary, redisBackend } from "../../src/index.js";
import { STEP_QUEUE } from "../../src/runtime/redis-keys.js";
import { wireAgent } from "./decisions-contract.js";
import { approvalAgent, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function runtimeOn(
  prefix: string,
  options: { workers: boolean; reconcile?: boolean },
): Promise<{ runtime: AgentRuntime; deleted: string[] }> {
  const ops = approvalAgent();
  const runtime = new AgentRuntime({
    agents: [ops.agent],
    backend: redisBackend({
      url: redisUrl(),
      prefix,
      ...(options.reconcile === true ? { reconcileIntervalMs: 200, strandedAfterMs: 100 } : {}),
    }),
    logger: silent,
  });
  await runtime.start({ workers: options.workers });
  cleanups.push(() => runtime.close({ timeoutMs: 1000 }));
  return { runtime, deleted: ops.deleted };
}

async function doctorReport(prefix: string) {
  let output = "";
  const code = await runDoctor({
    redis: redisUrl(),
    prefix,
    json: true,
    strandedAfterMs: 0,
    write: (text) => (output += text),
  });
  return { code, report: JSON.parse(output) as { decidedRuns: string[]; problems: string[] } };
}

/**
 * The run's summary once its result is in: a decided run waiting for approval is not settled
 * (RunHandle.result), so this waits for the step the reconciler queues (the test's bound ends a
 * hang), not for the first status after `awaiting_approval`, which may be `running`.
 */
async function settled(runtime: AgentRuntime, runId: string): Promise<RunSummary> {
  await runtime.handle(runId).result();
  return runtime.get(runId);
}

describe("a decision whose step was lost", () => {
  it("is found by doctor and stepped by the reconciler: the run completes, the tool runs once", async () => {
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const parker = await runtimeOn(prefix, { workers: true });
    const parked = await (await parker.runtime.submit("ops", "/tmp/a")).result();
    expect(parked.status).toBe("awaiting_approval");
    const toolCallId = parked.pending[0]?.toolCallId ?? "";
    await parker.runtime.close({ timeoutMs: 1000 });

    // Approved from a process with no workers; then the step job is removed before any takes it.
    const approver = await runtimeOn(prefix, { workers: false });
    await approver.runtime.approve(parked.runId, toolCallId, { by: "ops-lead" });
    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const steps = new Queue(STEP_QUEUE, { connection, prefix });
    cleanups.push(async () => {
      await steps.close();
      connection.disconnect();
    });
    const waiting = await steps.getWaiting();
    expect(waiting.map((job) => job.data as { runId: string })).toEqual([
      expect.objectContaining({ runId: parked.runId }),
    ]);
    await waiting[0]?.remove();
    expect(await steps.getWaitingCount()).toBe(0);

    // Stalled as the issue found it: still awaiting approval, and a second approve is refused.
    expect((await approver.runtime.get(parked.runId)).status).toBe("awaiting_approval");
    await expect(
      approver.runtime.approve(parked.runId, toolCallId, { by: "ops-lead" }),
    ).rejects.toMatchObject({ code: "already_decided" });
    const before = await doctorReport(prefix);
    expect(before.code).toBe(1);
    expect(before.report.decidedRuns).toEqual([parked.runId]);

    const worker = await runtimeOn(prefix, { workers: true, reconcile: true });
    const run = await settled(worker.runtime, parked.runId);
    expect(run.status).toBe("completed");
    expect(worker.deleted).toEqual(["/tmp/a"]);
    const after = await doctorReport(prefix);
    expect(after.report.decidedRuns).toEqual([]);
  }, 30_000);

  it("leaves alone a quorum call only partly approved: it still waits for a second person", async () => {
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const bank = wireAgent(2);
    const runtime = new AgentRuntime({
      agents: [bank.agent],
      backend: redisBackend({
        url: redisUrl(),
        prefix,
        reconcileIntervalMs: 200,
        strandedAfterMs: 100,
      }),
      logger: silent,
    });
    await runtime.start();
    cleanups.push(() => runtime.close({ timeoutMs: 1000 }));
    const handle = await runtime.submit("bank", "pay acme");
    expect((await handle.result()).status).toBe("awaiting_approval");
    await runtime.approve(handle.runId, "call_1", { by: "alice" });
    const { report } = await doctorReport(prefix);
    expect(report.decidedRuns).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 600)); // reconciler rounds pass
    expect((await runtime.get(handle.runId)).status).toBe("awaiting_approval");
    expect(bank.wired).toEqual([]);
    await runtime.approve(handle.runId, "call_1", { by: "bob" });
    expect((await handle.result()).status).toBe("completed");
  }, 30_000);

  it("leaves alone a parked run nobody decided", async () => {
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const parker = await runtimeOn(prefix, { workers: true, reconcile: true });
    const parked = await (await parker.runtime.submit("ops", "/tmp/b")).result();
    expect(parked.status).toBe("awaiting_approval");
    const { report } = await doctorReport(prefix);
    expect(report.decidedRuns).toEqual([]);
    expect(parker.deleted).toEqual([]);
  }, 30_000);
});
