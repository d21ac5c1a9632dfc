// A step that finds the run's lease taken: it leaves a wake-up for a live holder, and also
// queues a step for the lease's expiry when the holder looks dead — its lease runs out
// unrenewed, or the queue delivers this step again after a crash (the holder may be the
// crashed worker itself, whose lease still runs for a while).
import { afterEach, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import { memoryBackend, type RunRecord } from "../../src/index.js";
import { ActiveRuns } from "../../src/store/active-runs.js";
import { runStep } from "../../src/workers/run-step.js";
import { withOverrides } from "../support/backend-overrides.js";
import { storedRun } from "../support/run-records.js";
import { silent } from "./fixtures.js";

const backends: RunBackend[] = [];

afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close({ timeoutMs: 1000 })));
});

const record: RunRecord = storedRun("run-1", { createdAt: 1, status: "running" });

/** A backend whose run lease another (maybe dead) worker just took, recording queued steps. */
async function leaseTakenElsewhere() {
  const backend = memoryBackend({ lockDurationMs: 60_000 });
  backends.push(backend);
  await backend.createRun(record);
  const holder = await backend.acquireLease(record.runId);
  if (!holder.acquired) throw new Error("expected the lease");
  const queued: Array<{ runId: string; delayMs: number | undefined }> = [];
  const observed = withOverrides(backend, {
    async enqueueStep(runId, options = {}) {
      queued.push({ runId, delayMs: options.delayMs });
    },
  });
  const deps = {
    backend: observed,
    agents: new Map(),
    logger: silent,
    clock: { now: () => Date.now() },
    active: new ActiveRuns(),
  };
  return { backend, holder, queued, deps };
}

describe("runStep when the run's lease is taken", () => {
  it("a first delivery leaves a wake-up for the live holder and queues nothing", async () => {
    const { backend, holder, queued, deps } = await leaseTakenElsewhere();

    await runStep(deps, { runId: record.runId }, { redelivered: false });

    expect(queued).toEqual([]);
    expect(await backend.releaseLease(record.runId, holder.token)).toEqual({ wake: true });
  });

  it("a re-delivery after a crash queues a step for the lease's expiry", async () => {
    const { queued, deps } = await leaseTakenElsewhere();

    await runStep(deps, { runId: record.runId }, { redelivered: true });

    expect(queued).toHaveLength(1);
    expect(queued[0]?.runId).toBe(record.runId);
    expect(queued[0]?.delayMs).toBeGreaterThan(0);
    expect(queued[0]?.delayMs).toBeLessThanOrEqual(60_000 + 50);
  });
});
