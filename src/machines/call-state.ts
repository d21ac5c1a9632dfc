import type { GivenApproval, ToolCall, ToolResult } from "../core/values.js";

/** A quorum call's approvals so far (direct runs; a durable run's are in its call ledger). */
export interface CallApprovals {
  needed: number;
  given: Array<GivenApproval & { inputHash: string; input?: Record<string, unknown> }>;
}

/** Where one tool call of the current response stands. */
export type CallStatus =
  | "invalid" // failed validation or names no tool: an error result, no handler
  | "allowed"
  | "denied"
  | "asked" // waiting for a person
  | "approved" // a person allowed it
  | "rejected" // a person denied it
  | "responded"; // a person answered in the tool's place: `response` is its result, no handler

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
  /** A call asked about under a quorum rule: how many must approve, and who has. */
  approvals?: CallApprovals;
  /** The person's answer to a `responded` call: it becomes the call's raw result. */
  response?: ToolResult;
}
