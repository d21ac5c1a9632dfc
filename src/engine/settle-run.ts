import type { JsonValue, RunResult } from "../core/values.js";
import type { RunCursor } from "../machines/run-cursor.js";
import { parkRun } from "./park-run.js";
import type { ParkedRun } from "./parked-run.js";
import type { RunEnv } from "./run-env.js";
import { finishRun } from "./run-lifecycle.js";
import { toRunResult } from "./run-result.js";

/**
 * A direct run's result once its machine stopped: parked for approval (`park` keeps it, and
 * `approval_required` is emitted), or ended, and then finished (its hooks, its recording).
 */
export async function settleRun(
  cursor: RunCursor,
  env: RunEnv,
  by: { name: string; now: number; approvalKey: string | undefined },
  park: (parked: ParkedRun) => void,
): Promise<RunResult<JsonValue>> {
  const snapshot = cursor.getSnapshot();
  const context = snapshot.context;
  const parked =
    snapshot.value === "awaitingApproval"
      ? parkRun(context, cursor, { ...by, conversation: env.conversation })
      : undefined;
  if (parked !== undefined) {
    const result = toRunResult(context, "awaiting_approval", env.conversation, by.name);
    park(parked);
    env.emit?.({ type: "approval_required", pending: result.pending });
    return result;
  }
  const status =
    snapshot.value === "done"
      ? "completed"
      : snapshot.value === "cancelled"
        ? "cancelled"
        : "failed";
  const result = toRunResult(context, status, env.conversation, by.name);
  await finishRun(env, result);
  return result;
}
