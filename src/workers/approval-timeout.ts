import { createHash, randomUUID } from "../core/node-crypto.js";
import { callKey, contextView } from "../store/run-view.js";
import { priorityOf, type RunRecord, type StepJob } from "../store/schemas.js";
import type { WorkerDeps } from "./worker-deps.js";

/** The reason and author of a decision harnessx takes when nobody decided in time. */
export const APPROVAL_TIMED_OUT = "approval timed out";
export const HARNESSX = "harnessx";

type ApprovalTimeout = NonNullable<StepJob["approvalTimeout"]>;

/**
 * A parked run of an agent with `approvalTimeoutMs`: queues the step that denies its pending
 * calls once the timeout passed, under an id derived from the run, its iteration and the calls
 * (a delayed BullMQ job on Redis, a timer in memory), so that saving the same park twice
 * queues it once.
 */
export async function scheduleApprovalTimeout(
  deps: WorkerDeps,
  record: RunRecord,
  timeoutMs: number,
): Promise<void> {
  const context = contextView(record);
  if (context === undefined) return;
  const callKeys = context.calls.filter((state) => state.status === "asked").map(callKey);
  if (callKeys.length === 0) return;
  const approvalTimeout: ApprovalTimeout = { iteration: context.iteration, callKeys };
  const calls = createHash("sha256").update(JSON.stringify(callKeys)).digest("base64url");
  await deps.backend.enqueueStep(record.runId, {
    delayMs: timeoutMs,
    jobId: `approval-timeout-${record.runId}-${context.iteration}-${calls.slice(0, 16)}`,
    approvalTimeout,
    ...priorityOf(record),
  });
}

/**
 * The approval timeout of a parked run passed: each of its calls still undecided is denied
 * with reason "approval timed out" by "harnessx", recorded like a person's decision (first
 * write wins, so a decision that came first stands and one that comes later is refused with
 * `already_decided`) and joining the audit trail. The step then applies them.
 */
export async function expireApprovals(
  deps: WorkerDeps,
  record: RunRecord | undefined,
  timeout: ApprovalTimeout,
): Promise<void> {
  if (record === undefined || record.status !== "awaiting_approval") return;
  const context = contextView(record);
  if (context === undefined || context.iteration !== timeout.iteration) return;
  const now = deps.clock.now();
  for (const state of context.calls) {
    const key = callKey(state);
    if (state.status !== "asked" || !timeout.callKeys.includes(key)) continue;
    const won = await deps.backend.decide(
      record.runId,
      context.iteration,
      key,
      {
        id: randomUUID(),
        decision: "deny",
        reason: APPROVAL_TIMED_OUT,
        by: HARNESSX,
        ...(state.inputHash === undefined ? {} : { inputHash: state.inputHash }),
        decidedAt: now,
      },
      {
        toolCallId: state.call.id,
        name: state.call.name,
        decision: "deny",
        reason: APPROVAL_TIMED_OUT,
        by: HARNESSX,
        inputHash: state.inputHash ?? null,
        at: now,
      },
    );
    if (won) {
      deps.logger.info({ runId: record.runId, toolCallId: state.call.id }, APPROVAL_TIMED_OUT);
    }
  }
}
