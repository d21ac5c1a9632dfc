import { newApprovalRequests } from "../store/approval-request.js";
import type { RunRecord } from "../store/schemas.js";
import type { WorkerDeps } from "./worker-deps.js";

/**
 * Tells of the calls a step left waiting for a person (`onApprovalRequested`, the webhook):
 * those that started waiting between `found` and `left`. A step that finds its run parked and
 * saves nothing is a redelivery (its worker may have died between the park's save and its
 * notices) or a spare wake-up: the notices are queued again under the same job ids, so none is
 * lost, and the listener, told already, is not told again.
 */
export async function tellApprovalRequests(
  deps: WorkerDeps,
  step: { found: RunRecord | undefined; left: RunRecord; saved: boolean },
): Promise<void> {
  if (deps.approvalRequested === undefined) return;
  if (step.saved) {
    await deps.approvalRequested(newApprovalRequests(step.found, step.left), { again: false });
  } else if (step.left.status === "awaiting_approval") {
    await deps.approvalRequested(newApprovalRequests(undefined, step.left), { again: true });
  }
}
