import type { CallState, RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { runBeforeToolExecution } from "../middleware/run-stages.js";
import { inputTooLargeResult, oversizedInput } from "../tools/input-limit.js";
import { invalidInputResult, unknownToolResult } from "../tools/run-handler.js";
import { validateInput } from "../tools/validate.js";
import { requireResponse } from "./require.js";
import type { RunEnv } from "./run-env.js";

/**
 * Phase `toolValidate`: each requested call passes `beforeToolExecution`, then the returned
 * call is validated. An unknown tool, invalid input or an input over `limits.maxToolInputBytes`
 * (refused before middleware sees it) becomes an error result; no handler runs.
 */
export async function prepareToolCalls(context: RunContext, env: RunEnv): Promise<RunMachineEvent> {
  const calls: CallState[] = [];
  for (const requested of requireResponse(context).toolCalls) {
    const oversized = oversizedInput(requested);
    if (oversized !== undefined) {
      calls.push({
        call: requested,
        status: "invalid",
        reason: "input too large",
        result: inputTooLargeResult(requested, oversized),
      });
      continue;
    }
    const call = await runBeforeToolExecution(env.pipeline, requested);
    const found = env.tools.get(call.name);
    if (found === undefined) {
      calls.push({
        call,
        status: "invalid",
        reason: "unknown tool",
        result: unknownToolResult(call),
      });
      continue;
    }
    const input = validateInput(found.input, call.input);
    calls.push(
      input.ok
        ? { call, status: "allowed", reason: "" }
        : {
            call,
            status: "invalid",
            reason: "invalid input",
            result: invalidInputResult(call, input.message),
          },
    );
  }
  return { type: "CALLS_PREPARED", calls };
}
