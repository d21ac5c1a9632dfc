import type { ToolResult } from "../core/values.js";
import { errorResult } from "../tools/run-handler.js";
import type { RecoveryPolicy } from "../tools/tool.js";

// A call whose worker stopped renewing its job lock while the handler ran (it crashed, or its
// event loop was blocked past lockDurationMs) may have run in whole, in part or not at all:
// what follows says its outcome is unknown, never that it did not run. If the first worker's
// result arrives later, the first commit wins and the late one is logged as discarded.

/** What the person sees on a call parked by recovery `ask`. */
export const INTERRUPTED_REASON =
  "The tool call's outcome is unknown: its worker stopped answering while it ran (a crash, or an event loop blocked past lockDurationMs), so it may or may not have taken effect (recovery: ask): approve to run it again, or deny it.";

/** The error result of a call interrupted under recovery `fail`. */
export const interruptedFailure = (toolCallId: string): ToolResult =>
  errorResult(
    toolCallId,
    "The tool call's outcome is unknown: its worker stopped answering while it ran (a crash, or an event loop blocked past lockDurationMs), so it may or may not have taken effect. It was not retried (recovery: fail).",
  );

/** What a tool job does with a call an earlier delivery started and never committed. */
export type Recovery =
  | { action: "run" }
  | { action: "commit"; result: ToolResult }
  | { action: "ask" };

/** The tool's `recovery` policy applied to an interrupted call. */
export function recover(policy: RecoveryPolicy, toolCallId: string): Recovery {
  switch (policy) {
    case "retry":
      return { action: "run" };
    case "fail":
      return { action: "commit", result: interruptedFailure(toolCallId) };
    case "ask":
      return { action: "ask" };
  }
}
