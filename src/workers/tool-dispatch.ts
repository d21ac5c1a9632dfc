import type { ToolResult } from "../core/values.js";
import { childRunId, isAgentTool } from "../engine/as-tool.js";
import { type CallContext, prepareCall, runPrepared } from "../engine/dispatch-tools.js";
import { recheckPermissions } from "../engine/resolve-permissions.js";
import type { RunEnv } from "../engine/run-env.js";
import { ABORTED, unlessAborted } from "../engine/unless-aborted.js";
import { type CallState, runsHandler } from "../machines/run-machine.js";
import { withExtractedContext } from "../observability/propagation.js";
import { traceChildStart } from "../observability/spans.js";
import { abortedByShutdown } from "../store/active-runs.js";
import type { JobDelivery } from "../store/backend.js";
import { eventPublisher } from "../store/event-publisher.js";
import { callKey } from "../store/run-view.js";
import { isTerminal, priorityOf, type ToolJob } from "../store/schemas.js";
import type { ToolCallRun } from "../store/tool-call-view.js";
import { errorResult } from "../tools/run-handler.js";
import { startChildRun } from "./child-runs.js";
import { INTERRUPTED_REASON, recover } from "./recovery.js";
import { capToolResult, DEFAULT_MAX_BYTES } from "./result-limit.js";
import { agentFor, type WorkerDeps } from "./worker-deps.js";

/**
 * A tool job's outcome: a raw result to commit, a call that waits for a person (and why), or
 * nothing when the run was cancelled while the handler ran.
 */
type Outcome =
  | { result: ToolResult }
  | { waitsForPerson: string }
  | { cancelled: true }
  | { childRunning: true };

/**
 * A tool-dispatch job: runs one permitted call's handler, unless its raw result is committed
 * already, and commits the raw result (first write wins) before the run's next step
 * post-processes it. The policy in force now is asked once more right before the handler.
 * The handler's start is marked with the job's first read, before the re-check; a delivery
 * that finds the mark without a committed result recovers a call a crash interrupted, as its
 * tool's `recovery` says. Resolves with the run as the job found it (none when unknown).
 */
export async function dispatchTool(
  deps: WorkerDeps,
  job: ToolJob,
  delivery?: JobDelivery,
): Promise<ToolCallRun | undefined> {
  const { backend } = deps;
  const { runId, iteration, toolCallId } = job;
  // One read: the run without its conversation, the call's commit and the cancel flag; and
  // the mark of this attempt's start, taken unless the run has no use for the job.
  const attemptKey = callKey({ call: { id: toolCallId }, interruptions: job.attempt });
  // A child run's start takes no mark (its id is derived from the call: a job delivered again
  // starts nothing twice), so a waiting parent keeps none while its child runs.
  const { run, committed, cancelRequested, started } = await backend.openToolCall(
    runId,
    iteration,
    toolCallId,
    namesAgentTool(deps, job) ? undefined : attemptKey,
  );
  if (run === undefined || isTerminal(run.status)) return run;
  const priority = priorityOf(run);
  if (committed) {
    // Committed before: never run the handler again; make sure the run moves on.
    await backend.enqueueStep(runId, { ...priority, agent: run.agent });
    return run;
  }
  const current = run.phase === "dispatch" && run.context?.iteration === iteration;
  const state = current ? run.call : undefined;
  const attemptNow = (state?.interruptions ?? 0) === (job.attempt ?? 0);
  if (run.context === undefined || state === undefined || !runsHandler(state) || !attemptNow) {
    deps.logger.debug({ runId, iteration, toolCallId }, "a stale tool job; ignored");
    return run;
  }
  if (delivery?.gaveUp !== undefined) {
    await giveUp(deps, job, delivery.gaveUp, priority);
    return run;
  }
  if (cancelRequested) {
    await backend.enqueueStep(runId, { ...priority, agent: run.agent });
    return run;
  }
  // Not marked when opened (the job named an agent tool) yet a plain tool's call (another
  // agent's tool of that name, after a handoff): its handler's start is marked now.
  const startedHere = (): Promise<boolean> =>
    started === undefined
      ? backend.markCallStarted(runId, iteration, attemptKey)
      : Promise.resolve(started);
  const context: CallContext = { runId: run.context.runId, iteration: run.context.iteration };
  const opened = { ...run, context: run.context };
  // The agent the run is under now: after a handoff, the tools are the target's.
  const agent = agentFor(deps, run.context.agent ?? run.agent, runId);
  const controller = new AbortController();
  const untrack = deps.active.track(runId, controller);
  const publisher = eventPublisher(backend, runId);
  try {
    const env = agent.runEnv({
      runId,
      sessionId: run.sessionId,
      signal: controller.signal,
      emit: publisher.emit,
      limits: deps.limits,
    });
    const outcome = await withExtractedContext(run.trace, () =>
      runPermitted(deps, context, state, env, startedHere, opened),
    );
    // Given up at the process's shutdown deadline: the job is left for another worker.
    if (abortedByShutdown(controller.signal)) throw controller.signal.reason;
    const tool = env.tools.get(state.call.name);
    if (!("childRunning" in outcome) && tool !== undefined && isAgentTool(tool)) {
      // The call starts no child (denied, asked or refused at dispatch): the parent no longer
      // waits for one, before the outcome that steps it is written (a crash in between
      // repeats this job, and so the release).
      await backend.releaseChild({ parentRunId: runId, runId: childRunId(runId, toolCallId) });
    }
    // The events not sent yet are appended as the outcome is written (a commit carries them in
    // its own write), and the run's next step is queued with them: issued together, they share
    // the round trip (a backend applies a commit before a step queued after it is issued,
    // `RunBackend.commitRaw`).
    const pending = await publisher.take();
    const publish = () => (pending.length === 0 ? undefined : backend.publish(runId, pending));
    const next = () => backend.enqueueStep(runId, { ...priority, agent: run.agent });
    if ("childRunning" in outcome) {
      // The child commits this call and wakes the run when it finishes (`wakeParent`).
      await publish();
    } else if ("waitsForPerson" in outcome) {
      const published = publish();
      const marked = backend.markCallInterrupted(
        runId,
        iteration,
        callKey(state),
        outcome.waitsForPerson,
      );
      await settledWith(published, settledWith(marked, next()));
    } else if ("cancelled" in outcome) {
      await settledWith(publish(), next());
      deps.logger.debug({ runId, toolCallId }, "the run was cancelled while its handler ran");
    } else if (
      !(await committedThen(
        backend.commitRaw(
          runId,
          iteration,
          capToolResult(outcome.result, deps.limits?.maxToolResultBytes ?? DEFAULT_MAX_BYTES),
          pending,
        ),
        next,
      ))
    ) {
      // First commit wins: another delivery (this job taken over while its handler ran here)
      // committed first, and the run goes on with that. Ours is discarded, never silently.
      deps.logger.warn(
        {
          runId,
          iteration,
          toolCallId,
          isError: outcome.result.isError,
          bytes: Buffer.byteLength(outcome.result.content),
        },
        "a late tool result was discarded: another delivery of the call committed first (first commit wins)",
      );
    }
  } finally {
    untrack();
  }
  return run;
}

/** True when the job's tool is an agent tool (`agent.asTool`) of the job's agent. */
function namesAgentTool(deps: WorkerDeps, job: ToolJob): boolean {
  if (job.agent === undefined || job.tool === undefined) return false;
  const tool = deps.agents.get(job.agent)?.tools.get(job.tool);
  return tool !== undefined && isAgentTool(tool);
}

/** The commit's outcome once `then` (issued right after it, not after its reply) is done too. */
async function committedThen(
  commit: Promise<boolean>,
  then: () => Promise<void>,
): Promise<boolean> {
  const [won] = await Promise.all([commit, then()]);
  return won;
}

/** `value` once `first` (when given) settled too: the first failure of either is thrown. */
async function settledWith<T>(first: Promise<void> | undefined, value: Promise<T>): Promise<T> {
  const [, result] = await Promise.all([first, value]);
  return result;
}

/**
 * The queue gave the job up for good (say, its worker died in the handler every time): the
 * call gets an error result (first write wins, so a late handler's result may have won) and
 * the run moves on, so that the model sees the failure instead of the run waiting forever.
 */
async function giveUp(
  deps: WorkerDeps,
  job: ToolJob,
  reason: string,
  priority: { priority?: number },
): Promise<void> {
  const { runId, iteration, toolCallId } = job;
  const result = errorResult(
    toolCallId,
    `The tool call failed and will not be retried: ${reason}.`,
  );
  // A call of an agent tool that started no child must not keep its parent waiting for one
  // (for any other call there is nothing to release).
  await deps.backend.releaseChild({ parentRunId: runId, runId: childRunId(runId, toolCallId) });
  const won = await deps.backend.commitRaw(runId, iteration, result);
  deps.logger.warn({ runId, iteration, toolCallId, reason, committed: won }, "a tool job gave up");
  await deps.backend.enqueueStep(runId, priority);
}

/**
 * The policy's last word, then the handler: a call denied now gets an error result instead,
 * and a call the policy now asks about waits for a person, as in direct runs. A call whose
 * start this job did not mark (`startedHere`: an earlier delivery did) follows its tool's
 * recovery policy.
 */
async function runPermitted(
  deps: WorkerDeps,
  context: CallContext,
  state: CallState,
  env: RunEnv,
  startedHere: () => Promise<boolean>,
  run: Parameters<typeof startChildRun>[1],
): Promise<Outcome> {
  const rechecked = await recheckPermissions({ ...context, calls: [state] }, env, {
    personDecisionsRecorded: true,
  });
  const checked = rechecked.type === "RECHECKED" ? rechecked.calls[0] : undefined;
  if (checked?.result !== undefined) return { result: checked.result };
  if (checked?.status === "asked") return { waitsForPerson: checked.reason };
  if (checked === undefined || !runsHandler(checked)) {
    const reason = checked?.reason ?? "the call is no longer permitted";
    return {
      result: errorResult(
        state.call.id,
        `Permission denied at dispatch: ${reason} (approval now required)`,
      ),
    };
  }
  const { runId, iteration } = context;
  const prepared = prepareCall(checked, env);
  const agentTool = "tool" in prepared && isAgentTool(prepared.tool) ? prepared.tool : undefined;
  if (agentTool !== undefined) {
    // Started again on a job delivered again: the child's id is derived, so nothing runs twice;
    // the write that stores it tells it on the parent's log (`child_started`), once.
    const started = await traceChildStart(checked.call, () =>
      startChildRun(deps, run, checked, agentTool),
    );
    return "result" in started ? started : { childRunning: true };
  }
  if (!(await startedHere())) {
    const policy = env.tools.get(checked.call.name)?.recovery ?? "retry";
    deps.logger.warn(
      { runId, iteration, toolCallId: checked.call.id, tool: checked.call.name, recovery: policy },
      "recovering a tool call interrupted by a crash",
    );
    const recovery = recover(policy, checked.call.id);
    if (recovery.action === "ask") return { waitsForPerson: INTERRUPTED_REASON };
    if (recovery.action === "commit") return { result: recovery.result };
  }
  if (!("tool" in prepared)) return { result: prepared };
  const result = await unlessAborted(runPrepared(context, prepared, env), env.signal);
  return result === ABORTED ? { cancelled: true } : { result };
}
