import type {
  JsonValue,
  PendingApproval,
  RunResult,
  RunStatus,
  ToolCall,
  ToolResult,
} from "../core/values.js";

/**
 * What `agent.runStream()` yields; `result` is always last. `TOutput`: the result's output
 * type (`RunResult<TOutput>`).
 */
export type RunEvent<TOutput = JsonValue> =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; text: string }
  | { type: "tool_start"; toolCall: ToolCall }
  | { type: "tool_end"; toolCall: ToolCall; result: ToolResult }
  | { type: "approval_required"; pending: PendingApproval[] }
  /** A call of an agent tool started a child run (SPEC §14), in a direct run or a durable one. */
  | { type: "child_started"; childRunId: string; agent: string; toolCallId: string }
  /** That child run finished; its outcome is the call's result. */
  | {
      type: "child_finished";
      childRunId: string;
      agent: string;
      toolCallId: string;
      status: RunStatus;
    }
  | { type: "result"; result: RunResult<TOutput> };

export type RunEventSink = (event: RunEvent) => void;
