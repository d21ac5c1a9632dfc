import type { JobDelivery } from "../store/backend.js";
import type { RunRecord, StepJob } from "../store/schemas.js";
import { type AdvancedRun, advanceRun, failStuckRun } from "./advance-run.js";
import { expireApprovals } from "./approval-timeout.js";
import { wakeParent } from "./child-runs.js";
import { leaseKeeperOf } from "./lease-keeper.js";
import type { HeldLease } from "./step-saves.js";
import type { WorkerDeps } from "./worker-deps.js";

/**
 * A run-step job: takes the run's lease and advances it. When another worker holds the lease,
 * the acquire attempt leaves it a wake-up (it steps the run again after releasing); a lease
 * that is running out unrenewed belongs to a dead worker, and so may the lease of a job the
 * queue delivers again after a crash: then a step is queued for the lease's expiry. Resolves
 * with the run as the step left it, when it opened the run.
 */
export async function runStep(
  deps: WorkerDeps,
  job: StepJob,
  delivery: JobDelivery = { redelivered: false },
): Promise<RunRecord | undefined> {
  const { backend } = deps;
  const priority = job.priority === undefined ? {} : { priority: job.priority };
  const lease = await backend.acquireLease(job.runId);
  if (!lease.acquired) {
    if (delivery.redelivered || lease.remainingMs < backend.lockDurationMs / 2) {
      await backend.enqueueStep(job.runId, {
        delayMs: lease.remainingMs + 50,
        agent: job.agent,
        ...priority,
      });
    }
    return undefined;
  }
  // Renewed with every other lease this process holds, until the step gives it up.
  const kept = leaseKeeperOf(backend, deps.logger).keep(job.runId, lease.token, {
    stopped: () => deps.active.stopped,
  });
  const held: HeldLease = { onRelease: () => kept.stop({ released: true }) };
  let left: AdvancedRun;
  try {
    if (job.approvalTimeout !== undefined) {
      const record = lease.opened?.record ?? (await backend.loadRun(job.runId));
      await expireApprovals(deps, record, job.approvalTimeout);
    }
    left = await advanceRun(deps, {
      runId: job.runId,
      token: lease.token,
      opened: lease.opened,
      rateLimitedSince: job.rateLimitedSince,
      lease: held,
    });
  } finally {
    kept.stop();
    // The step's last save may have given the lease up already.
    const { wake } = held.released ?? (await backend.releaseLease(job.runId, lease.token));
    if (wake) await backend.enqueueStep(job.runId, { ...priority, agent: job.agent });
  }
  const { record, deferral } = left;
  // A child run that finished (now, or before a crash cut its step short) wakes its parent.
  if (record !== undefined) await wakeParent(deps, record);
  if (deferral !== undefined) {
    // The model call waits for its rate limit: the run comes back when it may go.
    await backend.enqueueStep(job.runId, {
      delayMs: deferral.delayMs,
      rateLimitedSince: deferral.waitingSince,
      agent: job.agent,
      ...priority,
    });
  }
  return record;
}

/**
 * A step job of the run failed for good (`reason`): say, the worker died in it every time, on
 * a provider or middleware that crashes the process. Nothing else would step the run again, so
 * it fails with the reason, unless it is elsewhere by now: finished, parked for a person, or at
 * `dispatch` with calls left to tool jobs, which the give-up queues (the step may have died
 * before it did; see `failStuckRun`). While another worker holds the run's lease, the give-up
 * is queued again for when that lease runs out (a crashed holder's lease expires).
 */
export async function giveUpStep(
  deps: WorkerDeps,
  runId: string,
  reason: string,
  priority?: number,
): Promise<void> {
  const { backend } = deps;
  const queued = priority === undefined ? {} : { priority };
  const lease = await backend.acquireLease(runId);
  if (!lease.acquired) {
    await backend.enqueueStep(runId, {
      delayMs: lease.remainingMs + 50,
      giveUp: reason,
      ...queued,
    });
    return;
  }
  let failed = false;
  try {
    failed = await failStuckRun(deps, { runId, token: lease.token, reason, opened: lease.opened });
  } finally {
    const { wake } = await backend.releaseLease(runId, lease.token);
    if (wake && !failed) await backend.enqueueStep(runId, queued);
  }
  // A child whose last step failed after it finished (or that failed now) still wakes its parent.
  const record = await backend.loadRun(runId);
  if (record !== undefined) await wakeParent(deps, record);
}
