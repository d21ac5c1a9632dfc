import type {
  JsonValue,
  PendingApproval,
  RunResult,
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
  | { type: "result"; result: RunResult<TOutput> };

export type RunEventSink = (event: RunEvent) => void;
