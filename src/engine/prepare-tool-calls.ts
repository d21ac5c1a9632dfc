import type { CallState, RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { runBeforeToolExecution } from "../middleware/run-stages.js";
import { invalidInputResult, unknownToolResult } from "../tools/run-handler.js";
import { validateInput } from "../tools/validate.js";
import { requireResponse } from "./require.js";
import type { RunEnv } from "./run-env.js";

/**
 * Phase `toolValidate`: each requested call passes `beforeToolExecution`, then the returned
 * call is validated. An unknown tool or invalid input becomes an error result; no handler runs.
 */
export async function prepareToolCalls(context: RunContext, env: RunEnv): Promise<RunMachineEvent> {
  const calls: CallState[] = [];
  for (const requested of requireResponse(context).toolCalls) {
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
