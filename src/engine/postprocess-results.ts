import { HarnessError } from "../core/errors.js";
import { entryById } from "../core/id-record.js";
import type { ToolResult } from "../core/values.js";
import { HookEvent } from "../hooks/events.js";
import type { RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { runAfterToolExecution } from "../middleware/run-stages.js";
import { refusedHandoffResult, settleHandoff } from "./handoffs.js";
import { notify, type RunEnv } from "./run-env.js";

/**
 * Phase `afterTool`: committed raw results pass result middleware (synthetic error results of
 * invalid or denied calls do not), then `TOOL_CALL_END`; results keep the model's call order.
 * Safe to repeat: it reads only committed results.
 */
export async function postprocessResults(
  context: RunContext,
  env: RunEnv,
): Promise<RunMachineEvent> {
  const results: ToolResult[] = [];
  const handoff = env.handoffs === undefined ? undefined : settleHandoff(context, env);
  for (const state of context.calls) {
    let result: ToolResult;
    if (state.result !== undefined) {
      result = state.result;
    } else {
      const raw = entryById(context.raw, state.call.id);
      if (raw === undefined) {
        throw new HarnessError(
          "backend_failed",
          `No committed result for tool call "${state.call.id}".`,
          {
            phase: "afterTool",
          },
        );
      }
      result = await runAfterToolExecution(env.pipeline, raw);
    }
    const refused = handoff?.refused.get(state.call.id);
    if (refused !== undefined) result = refusedHandoffResult(state.call.id, refused);
    results.push(result);
    const hookedToolCallEnd = notify(env, HookEvent.TOOL_CALL_END, () => ({
      runId: context.runId,
      toolCall: state.call,
      result,
    }));
    if (hookedToolCallEnd !== undefined) await hookedToolCallEnd;
    env.emit?.({ type: "tool_end", toolCall: state.call, result });
  }
  const hookedLoopIterationEnd = notify(env, HookEvent.LOOP_ITERATION_END, () => ({
    runId: context.runId,
    iteration: context.iteration,
  }));
  if (hookedLoopIterationEnd !== undefined) await hookedLoopIterationEnd;
  const to = handoff?.to;
  if (to === undefined) return { type: "RESULTS_PROCESSED", results };
  const hookedHandoff = notify(env, HookEvent.HANDOFF, () => ({
    runId: context.runId,
    from: env.config.name,
    to,
  }));
  if (hookedHandoff !== undefined) await hookedHandoff;
  return { type: "RESULTS_PROCESSED", results, handoff: to };
}
