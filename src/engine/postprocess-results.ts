import { HarnessError } from "../core/errors.js";
import { entryById } from "../core/id-record.js";
import type { ToolCall, ToolResult } from "../core/values.js";
import { HookEvent } from "../hooks/events.js";
import type { RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { runAfterToolExecution } from "../middleware/run-stages.js";
import { isAgentTool } from "./as-tool.js";
import { refusedHandoffResult, settleHandoff } from "./handoffs.js";
import { record } from "./record.js";
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
      await recordChildResult(context, env, state.call, raw);
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

/**
 * Records an agent tool's raw result (its child run's outcome) as the parent takes it in: a
 * durable child commits it long after the call's tool job ended, so this is where both direct
 * and durable parents have it. The recording then holds it, and a replay of the parent needs
 * no children (`ReplayProvider.recordedToolResult`). A step taken again may record it twice.
 */
async function recordChildResult(
  context: RunContext,
  env: RunEnv,
  call: ToolCall,
  raw: ToolResult,
): Promise<void> {
  if (env.recorder === undefined) return;
  const found = env.tools.get(call.name);
  if (found === undefined || !isAgentTool(found)) return;
  await record(env, context, { type: "tool_result_raw", toolCall: call, result: raw });
}
