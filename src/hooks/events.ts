/** Lifecycle events observers can subscribe to. */
export const HookEvent = {
  AGENT_START: "agent_start",
  AGENT_END: "agent_end",
  LOOP_ITERATION_START: "loop_iteration_start",
  LOOP_ITERATION_END: "loop_iteration_end",
  LLM_REQUEST: "llm_request",
  LLM_RESPONSE: "llm_response",
  TOOL_CALL_START: "tool_call_start",
  TOOL_CALL_END: "tool_call_end",
  ERROR: "error",
  SKILL_INVOKED: "skill_invoked",
  KNOWLEDGE_ACCESSED: "knowledge_accessed",
  SANDBOX_EXEC: "sandbox_exec",
  CHECKPOINT: "checkpoint",
  /** A `transfer_to_<name>` call handed the run to another agent (§14). */
  HANDOFF: "handoff",
} as const;

export type HookEvent = (typeof HookEvent)[keyof typeof HookEvent];
