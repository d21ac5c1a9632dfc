import type { JsonValue, Message, PendingApproval, RunResult, RunStatus } from "../core/values.js";
import type { Phase, RunContext } from "../machines/run-machine.js";

const STATUS_OF: Partial<Record<string, RunStatus>> = {
  done: "completed",
  failed: "failed",
  cancelled: "cancelled",
  awaitingApproval: "awaiting_approval",
};

/** The status a phase reports; every other phase is still running. */
export const statusOf = (phase: Phase | "done" | "failed" | "cancelled"): RunStatus | "running" =>
  STATUS_OF[phase] ?? "running";

export function pendingOf(context: RunContext): PendingApproval[] {
  return context.calls
    .filter((each) => each.status === "asked")
    .map((each) => ({
      toolCallId: each.call.id,
      name: each.call.name,
      input: each.call.input,
      reason: each.reason,
      ...(each.approvals === undefined
        ? {}
        : {
            approvals: {
              needed: each.approvals.needed,
              given: each.approvals.given.map(({ by, at, reason }) => ({ by, at, reason })),
            },
          }),
    }));
}

/**
 * The public result of a run that finished or waits, its messages the first
 * `context.messageCount` of the run's `conversation` (its log); `startedAgent` names the agent
 * when the context does not (a snapshot saved before handoffs existed).
 */
export function toRunResult(
  context: RunContext,
  status: RunStatus,
  conversation: readonly Message[],
  startedAgent: string,
): RunResult<JsonValue> {
  return {
    runId: context.runId,
    sessionId: context.sessionId,
    status,
    output: status === "completed" ? context.output : null,
    error: status === "failed" || status === "cancelled" ? context.error : null,
    // A snapshot saved before stop reasons were kept gives the result it gave then.
    ...(context.stopReason === undefined ? {} : { stopReason: context.stopReason }),
    agent: context.agent ?? startedAgent,
    pending: status === "awaiting_approval" ? pendingOf(context) : [],
    usage: context.usage,
    iterations: context.iteration,
    messages: conversation.slice(0, context.messageCount),
  };
}
