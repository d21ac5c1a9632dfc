import type { ToolResult } from "../core/values.js";
import { executeCall, runsHandler } from "../engine/dispatch-tools.js";
import { recheckPermissions } from "../engine/resolve-permissions.js";
import type { RunEnv } from "../engine/run-env.js";
import type { CallState, RunContext } from "../machines/run-machine.js";
import { eventPublisher } from "../runtime/event-publisher.js";
import { contextView } from "../runtime/run-view.js";
import { isTerminal, type ToolJob } from "../runtime/schemas.js";
import { errorResult } from "../tools/run-handler.js";
import { agentFor, type WorkerDeps } from "./worker-deps.js";

/**
 * A tool-dispatch job: runs one permitted call's handler, unless its raw result is committed
 * already, and commits the raw result (first write wins) before the run's next step
 * post-processes it. The policy in force now is asked once more right before the handler.
 */
export async function dispatchTool(deps: WorkerDeps, job: ToolJob): Promise<void> {
  const { backend } = deps;
  const { runId, iteration, toolCallId } = job;
  const record = await backend.loadRun(runId);
  if (record === undefined || isTerminal(record.status)) return;
  const committed = await backend.rawResults(runId, iteration);
  if (committed[toolCallId] !== undefined) {
    // Committed before: never run the handler again; make sure the run moves on.
    await backend.enqueueStep(runId);
    return;
  }
  const view = contextView(record);
  const current = record.phase === "dispatch" && view?.iteration === iteration;
  // The snapshot's context is the machine's RunContext; its calls were parsed by contextView.
  const context = record.snapshot?.context as RunContext | undefined;
  const state = current ? context?.calls.find((each) => each.call.id === toolCallId) : undefined;
  if (context === undefined || state === undefined || !runsHandler(state)) {
    deps.logger.debug({ runId, iteration, toolCallId }, "a stale tool job; ignored");
    return;
  }
  if (await backend.cancelRequested(runId)) {
    await backend.enqueueStep(runId);
    return;
  }
  const agent = agentFor(deps, record.agent, runId);
  const controller = new AbortController();
  const untrack = deps.active.track(runId, controller);
  const publisher = eventPublisher(backend, runId);
  try {
    const env = agent.runEnv({
      runId,
      sessionId: record.sessionId,
      signal: controller.signal,
      emit: publisher.emit,
    });
    const result = await runPermitted(context, state, env);
    await publisher.flush();
    const won = await backend.commitRaw(runId, iteration, result);
    if (!won) deps.logger.warn({ runId, toolCallId }, "a raw result was committed before ours");
  } finally {
    untrack();
  }
  await backend.enqueueStep(runId);
}

/** The policy's last word, then the handler: a call denied now gets an error result instead. */
async function runPermitted(
  context: RunContext,
  state: CallState,
  env: RunEnv,
): Promise<ToolResult> {
  const rechecked = await recheckPermissions({ ...context, calls: [state] }, env);
  const checked = rechecked.type === "RECHECKED" ? rechecked.calls[0] : undefined;
  if (checked?.result !== undefined) return checked.result;
  if (checked === undefined || !runsHandler(checked)) {
    return errorResult(
      state.call.id,
      `Permission denied at dispatch: ${checked?.reason ?? "the call is no longer permitted"} (approval now required)`,
    );
  }
  return executeCall(context, checked, env);
}
