import { HookEvent } from "../hooks/events.js";
import type { RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { runAfterLlmCall } from "../middleware/run-stages.js";
import { emitContentAsDeltas } from "./emit-content.js";
import { requireResponse } from "./require.js";
import { notify, type RunEnv } from "./run-env.js";
import { settleFinalAnswer } from "./structured-output.js";

/** Phase `afterLlm`: response middleware; the processed response is what the run stores. */
export async function afterLlm(context: RunContext, env: RunEnv): Promise<RunMachineEvent> {
  const raw = requireResponse(context);
  const response = await runAfterLlmCall(env.pipeline, raw);
  // Buffered deltas: the processed text is emitted once, after processing.
  if (env.emit && env.pipeline.afterLlmCall.length > 0)
    emitContentAsDeltas(response.content, env.emit);
  const hookedLlmResponse = notify(env, HookEvent.LLM_RESPONSE, () => ({
    runId: context.runId,
    response,
    durationMs: context.responseMs,
  }));
  if (hookedLlmResponse !== undefined) await hookedLlmResponse;
  if (response.toolCalls.length === 0) {
    const hookedLoopIterationEnd = notify(env, HookEvent.LOOP_ITERATION_END, () => ({
      runId: context.runId,
      iteration: context.iteration,
    }));
    if (hookedLoopIterationEnd !== undefined) await hookedLoopIterationEnd;
  }
  const schema = env.config.output;
  if (schema !== undefined && response.toolCalls.length === 0) {
    return settleFinalAnswer(schema, context, env, response);
  }
  return { type: "RESPONSE_PROCESSED", response };
}
