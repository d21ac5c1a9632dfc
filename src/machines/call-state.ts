import type { ToolCall, ToolResult } from "../core/values.js";

/** Where one tool call of the current response stands. */
export type CallStatus =
  | "invalid" // failed validation or names no tool: an error result, no handler
  | "allowed"
  | "denied"
  | "asked" // waiting for a person
  | "approved" // a person allowed it
  | "rejected"; // a person denied it

export interface CallState {
  /** The call as `beforeToolExecution` returned it. */
  call: ToolCall;
  status: CallStatus;
  /** Why the policy or a person decided as it did. */
  reason: string;
  /** Binds an approval to this exact input (set while asked). */
  inputHash?: string;
  decidedBy?: string;
  /** The error result of a call that runs no handler. */
  result?: ToolResult;
  /**
   * Durable runs: how many times a crash interrupted this call's handler and a person was
   * asked whether to run it again (its tool's recovery is `ask`). Absent until the first time.
   */
  interruptions?: number;
}
