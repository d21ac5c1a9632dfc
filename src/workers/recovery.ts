import type { ToolResult } from "../core/values.js";
import { errorResult } from "../tools/run-handler.js";
import type { RecoveryPolicy } from "../tools/tool.js";

/** What the person sees on a call parked by recovery `ask`. */
export const INTERRUPTED_REASON =
  "The tool call was interrupted by a worker crash (recovery: ask): approve to run it again, or deny it.";

/** The error result of a call interrupted under recovery `fail`. */
export const interruptedFailure = (toolCallId: string): ToolResult =>
  errorResult(
    toolCallId,
    "The tool call was interrupted by a worker crash and was not retried (recovery: fail).",
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
