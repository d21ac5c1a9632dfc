/** The entry types of a recorded run with one allowed tool call, then a final answer. */
export const ONE_TOOL_CALL_RUN = [
  "run_start",
  "llm_request",
  "llm_response_raw",
  "decision",
  "tool_result_raw",
  "llm_request",
  "llm_response_raw",
  "run_end",
] as const;
