import { RunCancelledError } from "../core/errors.js";
import { entryById, recordById } from "../core/id-record.js";
import { personResponses } from "../engine/dispatch-tools.js";
import { currentPhase, drive } from "../engine/drive.js";
import type { ProviderDeferral } from "../engine/provider-gate.js";
import { notify, type RunEnv } from "../engine/run-env.js";
import { decisionApplies, finishRun, startRun } from "../engine/run-lifecycle.js";
import { statusOf, toRunResult } from "../engine/run-result.js";
import { HookEvent } from "../hooks/events.js";
import { RunCursor } from "../machines/run-cursor.js";
import {
  type CallState,
  type Decision,
  type FinalPhase,
  type Phase,
  runsHandler,
} from "../machines/run-machine.js";
import { persistedRunSnapshot } from "../machines/run-snapshot.js";
import { withExtractedContext } from "../observability/propagation.js";
import { isRunSpan } from "../observability/run-span.js";
import { requestedModel, traceRun } from "../observability/spans.js";
import { approvalHash } from "../permissions/input-hash.js";
import { abortedByShutdown } from "../store/active-runs.js";
import { checkpointOf } from "../store/checkpoint.js";
import { conversationOf } from "../store/conversation.js";
import { BackendError } from "../store/errors.js";
import { type EventPublisher, eventPublisher } from "../store/event-publisher.js";
import type { OpenedRun } from "../store/leases.js";
import { markLiveContext } from "../store/live-context.js";
import { callKey, currentAgentOf } from "../store/run-view.js";
import {
  isTerminal,
  type PersistedSnapshot,
  priorityOf,
  type RunRecord,
  type ToolJob,
} from "../store/schemas.js";
import { appliedDecision } from "./applied-decision.js";
import { tellApprovalRequests } from "./approval-requests.js";
import { scheduleApprovalTimeout } from "./approval-timeout.js";
import { callsAtDispatch, queueToolJobs } from "./dispatch-calls.js";
import { spanOutcome } from "./span-outcome.js";
import {
  boundaryOf,
  type HeldLease,
  outcomeEvents,
  type SaveBoundary,
  StepSaves,
  toolJobsFor,
} from "./step-saves.js";
import { waitForTurnChildren } from "./turn-children.js";
import { agentFor, type WorkerDeps } from "./worker-deps.js";

/** Tool handlers run on tool-dispatch jobs, so a step hands the run on at `dispatch`. */
const STOP_AT: ReadonlySet<Phase> = new Set<Phase>(["dispatch"]);

/**
 * How the step came to the run's current phase: it `opened` the run there (restored from the
 * store), or it `drove` the run there itself. A dispatch the step drove to has no tool job out
 * yet (none can be interrupted); one it opened at may.
 */
type Arrival = "opened" | "drove";

/** One step's working parts: the run's machine snapshot and the saves of its boundaries. */
interface Step {
  readonly deps: WorkerDeps;
  /** The run's lease token: every save, and the children a turn records, are fenced by it. */
  readonly token: number;
  readonly cursor: RunCursor;
  /** The environment of the agent the run is under: a handoff replaces it (`envFor`). */
  env: RunEnv;
  /** The environment of agent `name` for this step's run. */
  readonly envFor: (name: string) => RunEnv;
  readonly controller: AbortController;
  /** The run's events as they happen (deltas while the provider streams), in order. */
  readonly publisher: EventPublisher;
  /** The run as at its last boundary, and every save under way. */
  readonly saves: StepSaves;
  /** Whether the step holds a lease its last save may give up (`HeldLease`). */
  readonly releasable: boolean;
  arrival: Arrival;
  /** Moves the step to the agent a handoff names (see `drive`). */
  switchAgent?: (name: string) => RunEnv;
}

/** What a step works on: the run, under its lease, as the lease found it. */
export interface StepOptions {
  runId: string;
  /** The run's lease: every save is fenced by it. */
  token: number;
  /** The run as read with the lease (none: the step reads it). */
  opened?: OpenedRun | undefined;
  /** The lease, when the step may give it up with its last save. */
  lease?: HeldLease | undefined;
}

/** What a step left: the run as it stands (none when unknown), and a model call's deferral. */
export interface AdvancedRun {
  record: RunRecord | undefined;
  /** Set when the run waits at `provider` for its rate limit: step it again after `delayMs`. */
  deferral: ProviderDeferral | undefined;
}

/**
 * Advances a run, under its lease `token`, as far as it can go: until it finishes, parks for
 * approval, waits for tool jobs, or its model call is deferred for its rate limit. Every effect
 * boundary is saved (fenced) and emits `CHECKPOINT`; events go to the run's log as they happen.
 */
export function advanceRun(
  deps: WorkerDeps,
  options: StepOptions & {
    /** Since when the run's model call has waited for its rate limit (`StepJob`). */
    rateLimitedSince?: number | undefined;
  },
): Promise<AdvancedRun> {
  const { runId, rateLimitedSince } = options;
  let deferral: ProviderDeferral | undefined;
  // Not awaited here: a step held at its model call keeps every suspended frame alive.
  const stepped = withStep(deps, options, async (step, starting) => {
    step.env.providerGate = deps.gates?.forStep(step.env, rateLimitedSince);
    const envFor = step.envFor;
    step.switchAgent = (name) => {
      const env = envFor(name);
      env.providerGate = deps.gates?.forStep(env, rateLimitedSince);
      step.env = env;
      return env;
    };
    // A run that failed as it started (it has no provider) is saved as such.
    if (starting && step.cursor.getSnapshot().status !== "active") await persist(step, "finished");
    const { agent, sessionId, trace } = step.saves.record;
    const { config, provider } = step.env;
    if (isRunSpan(trace)) {
      // The step's spans are children of the run's `invoke_agent` span, started at submit.
      deferral = await withExtractedContext(trace, () => proceed(step));
      const outcome = spanOutcome(step.cursor.getSnapshot());
      if (outcome.usage !== undefined) deps.runSpans?.finish(runId, outcome, trace);
      return;
    }
    // Submitted where no tracer was registered: each step is an `invoke_agent` span. Returned,
    // not awaited: a step held at its model call keeps no frame of this function alive.
    return withExtractedContext(trace, () =>
      traceRun(
        {
          agent,
          runId,
          sessionId,
          model: requestedModel(config.model, provider),
          provider: provider?.name,
        },
        () => proceed(step),
        () => spanOutcome(step.cursor.getSnapshot()),
      ),
    ).then((left) => {
      deferral = left;
    });
  });
  return stepped.then((record) => ({ record, deferral }));
}

/**
 * Fails a run that a failed step left stuck (see `giveUpStep`), under its lease `token`: one
 * that is queued or running anywhere but at `dispatch` with calls left to tool jobs. At
 * `dispatch` it queues the tool jobs of the calls that have no result instead (the step may
 * have died before it queued them, say those of a waiting parent's children): their ids are
 * fixed, so a job queued already is not queued twice, and each moves the run on. A dispatch
 * with nothing left to a tool job would wait forever: it fails. True when it failed the run.
 */
export async function failStuckRun(
  deps: WorkerDeps,
  options: StepOptions & { reason: string },
): Promise<boolean> {
  const { reason } = options;
  let failed = false;
  await withStep(deps, { ...options, lease: undefined }, async (step) => {
    const { value, context } = step.cursor.getSnapshot();
    const phase = value as Phase;
    if (phase === "awaitingApproval") return;
    if (phase === "dispatch") {
      const prefetched = step.saves.takeRaw(context.iteration);
      const { running } = await callsAtDispatch(deps.backend, context, {
        prefetched,
        drove: false,
      });
      if (running.length > 0) return queueToolJobs(deps.backend, toolJobs(step, running));
    }
    const message = `The run's step failed for good and will not be retried: ${reason}.`;
    step.cursor.send({ type: "FAIL", error: new BackendError(message, { phase }).toJSON() });
    await persist(step, "finished");
    deps.runSpans?.finish(
      options.runId,
      spanOutcome(step.cursor.getSnapshot()),
      step.saves.record.trace ?? {},
    );
    failed = true;
  });
  return failed;
}

/**
 * Opens a step on an unfinished run (its machine snapshot, started or restored, and its
 * environment), runs `body`, then publishes what is left and announces where the run ended up.
 * Resolves with the run as the step left it (none when unknown).
 */
async function withStep(
  deps: WorkerDeps,
  { runId, token, opened, lease }: StepOptions,
  body: (step: Step, starting: boolean) => Promise<void>,
): Promise<RunRecord | undefined> {
  const record = opened === undefined ? await deps.backend.loadRun(runId) : opened.record;
  if (record === undefined) {
    deps.logger.warn({ runId }, "a step for an unknown run; ignored");
    return undefined;
  }
  if (isTerminal(record.status)) return record;
  const controller = new AbortController();
  const untrack = deps.active.track(runId, controller);
  const publisher = eventPublisher(deps.backend, runId);
  // The run's log as the store loaded it; the step appends to it, and its saves store what it
  // added since the last. A handoff's environment goes on with the same log.
  const conversation = [...conversationOf(record)];
  const envFor = (name: string): RunEnv =>
    agentFor(deps, name, runId).runEnv({
      runId,
      sessionId: record.sessionId,
      signal: controller.signal,
      emit: publisher.emit,
      limits: deps.limits,
      agentKnown: (known) => deps.agents.has(known),
      conversation,
    });
  // After a handoff the run is under the agent it was handed to (its record names the first).
  const env = envFor(currentAgentOf(record));
  try {
    const cancelled = opened?.cancelRequested ?? (await deps.backend.cancelRequested(runId));
    if (cancelled) controller.abort();
    const starting = record.snapshot === null;
    const cursor =
      record.snapshot === null
        ? await startCursor(record, env)
        : RunCursor.restore(record.snapshot);
    const saves = new StepSaves({
      backend: deps.backend,
      runId,
      token,
      record,
      publisher,
      lease,
      opened: opened?.raw,
      outcomeEvents,
      onApplied: async (applied) => {
        if (applied.cancelRequested) controller.abort();
        const { status, phase } = applied;
        const { sessionId } = applied.record;
        await notify(step.env, HookEvent.CHECKPOINT, () => ({ sessionId, runId, status, phase }));
      },
    });
    const step: Step = {
      deps,
      token,
      cursor,
      env,
      envFor,
      controller,
      publisher,
      saves,
      releasable: lease !== undefined,
      arrival: "opened",
    };
    await body(step, starting);
    await saves.settle();
    await publisher.flush();
    if (saves.anyApplied) await announce(step);
    const { approvalTimeoutMs } = env.config;
    if (saves.anyApplied && saves.record.status === "awaiting_approval" && approvalTimeoutMs) {
      await scheduleApprovalTimeout(deps, saves.record, approvalTimeoutMs);
    }
    await tellApprovalRequests(deps, {
      found: record,
      left: saves.record,
      saved: saves.anyApplied,
    });
    return saves.record;
  } finally {
    untrack();
  }
}

function startCursor(record: RunRecord, env: RunEnv): Promise<RunCursor> {
  return startRun(env, {
    runId: record.runId,
    sessionId: record.sessionId,
    input: record.input.text ?? record.input.messages,
    messages: record.input.messages,
    maxIterations: record.input.maxIterations,
    agent: record.agent,
  });
}

async function proceed(step: Step): Promise<ProviderDeferral | undefined> {
  for (;;) {
    const snapshot = step.cursor.getSnapshot();
    if (snapshot.status !== "active") return undefined;
    const phase = snapshot.value as Phase;
    if (step.saves.released !== undefined) {
      // The last save gave the lease up; entering dispatch, it queued the tool jobs with it.
      // A cancel that came meanwhile is the run's next step's to apply.
      if (phase !== "dispatch" || step.controller.signal.aborted) await handOn(step);
      return undefined;
    }
    if (step.controller.signal.aborted) {
      step.cursor.send({ type: "CANCEL", error: new RunCancelledError(phase).toJSON() });
      await persist(step, "finished");
    } else if (phase === "awaitingApproval") {
      if (!(await applyDecisions(step))) return undefined;
    } else if (phase === "dispatch") {
      if (!(await collectToolResults(step))) return undefined;
    } else {
      step.arrival = "drove";
      const deferral = await drive(step.cursor, step.env, {
        stopAt: STOP_AT,
        onBoundary: (_cursor, left) => persistAtBoundary(step, left),
        ...(step.switchAgent === undefined ? {} : { switchAgent: step.switchAgent }),
      });
      if (deferral !== undefined) {
        await saveWhereItWaits(step);
        return deferral;
      }
    }
  }
}

/**
 * A model call deferred for its rate limit ends the step: the run is saved where it waits (at
 * `provider`) unless it was saved there already, so that what ran before the call (the run's
 * start and `AGENT_START`, the iteration's start, compose) does not run again when the run
 * comes back.
 */
async function saveWhereItWaits(step: Step): Promise<void> {
  if (currentPhase(step.cursor) !== step.saves.record.phase) await persist(step, "deferred");
}

/** A step that gave its lease up and finds more to do: the run's next step does it. */
async function handOn(step: Step): Promise<void> {
  const { record } = step.saves;
  await step.deps.backend.enqueueStep(record.runId, { ...priorityOf(record), agent: record.agent });
}

/**
 * Whether a save is the step's last: the run finished, or it enters `dispatch` driven by this
 * step with calls for tool jobs to run (none can be out yet, so the step only hands them on).
 */
function lastSave(step: Step, phase: Phase | FinalPhase, status: RunRecord["status"]): boolean {
  if (!step.releasable) return false;
  if (isTerminal(status)) return true;
  return (
    phase === "dispatch" &&
    step.arrival === "drove" &&
    step.cursor.getSnapshot().context.calls.some(runsHandler)
  );
}

/** After the machine left phase `left`: saves the run if it now stands at an effect boundary. */
async function persistAtBoundary(step: Step, left: Phase): Promise<void> {
  const boundary = boundaryOf(step.cursor.getSnapshot().value as Phase | FinalPhase, left);
  if (boundary !== undefined) await persist(step, boundary);
}

/**
 * Saves the run at `boundary` (fenced by the lease) and emits `CHECKPOINT`; `StepSaves` says
 * what each boundary writes and waits for.
 */
async function persist(step: Step, boundary: SaveBoundary): Promise<void> {
  const snapshot = step.cursor.getSnapshot();
  const phase = snapshot.value as Phase | FinalPhase;
  const status = statusOf(phase);
  markLiveContext(snapshot.context);
  const previous = step.saves.record;
  const release = lastSave(step, phase, status);
  // Entering dispatch with calls for tool jobs: they are queued right behind the save (and so
  // behind every save before it); the children they start are recorded before it.
  const calls = release && !isTerminal(status) ? snapshot.context.calls.filter(runsHandler) : [];
  const { iteration } = snapshot.context;
  const turn =
    calls.length > 0
      ? await waitForTurnChildren(step.deps, { ...step, record: previous, iteration }, calls)
      : undefined;
  // A turn that starts children leaves the run waiting for them: stored, and told, as such.
  const stored = turn !== undefined ? "waiting" : status;
  const record: RunRecord = {
    ...previous,
    status: stored,
    phase,
    // Plain data already (the machine's context holds no actors): backends serialise it.
    snapshot: persistedRunSnapshot(snapshot) as unknown as PersistedSnapshot,
    // The log as it stands at this save (it grows after it): the store appends what is new.
    messages: step.env.conversation.slice(0, snapshot.context.messageCount),
    result:
      status === "running"
        ? null
        : toRunResult(snapshot.context, status, step.env.conversation, previous.agent),
    updatedAt: step.deps.clock.now(),
  };
  // A process that gave up on this job at its shutdown deadline leaves the run as it stands.
  if (abortedByShutdown(step.controller.signal)) throw step.controller.signal.reason;
  const checkpoint = checkpointOf(record, conversationOf(previous).length, step.saves.takeHanded());
  await step.saves.save({
    boundary,
    record,
    phase,
    status: stored,
    checkpoint,
    release,
    thenTools: toolJobs(step, turn?.toolCalls ?? calls),
    iteration,
  });
  // No await otherwise: a run's end hooks follow its final save closely.
  if (turn !== undefined) await turn.start();
}

/** A parked run: applies the recorded decisions on its pending calls; false when there are none. */
async function applyDecisions(step: Step): Promise<boolean> {
  const context = step.cursor.getSnapshot().context;
  const recorded = await step.deps.backend.decisions(context.runId, context.iteration);
  const decisions: Array<[string, Decision]> = [];
  for (const state of context.calls) {
    const stored = state.status === "asked" ? entryById(recorded, callKey(state)) : undefined;
    if (stored === undefined) continue;
    // The decision binds the input a person saw; the stored call must still hash to it.
    if (!decisionApplies(context.runId, state, stored.inputHash, step.env.approvalKey)) {
      step.deps.logger.warn(
        { runId: context.runId, toolCallId: state.call.id },
        "a recorded decision does not match the pending input; ignored",
      );
      continue;
    }
    decisions.push([state.call.id, appliedDecision(stored)]);
  }
  if (decisions.length === 0) return false;
  step.cursor.send({ type: "DECIDED", decisions: recordById(decisions) });
  await persistAtBoundary(step, "awaitingApproval");
  return true;
}

/**
 * Phase `dispatch`: when every permitted call has a committed raw result, hands them to the
 * machine; when every call still missing one was interrupted by a crash under recovery `ask`,
 * parks the run for a person (`INTERRUPTED`); otherwise queues a tool job per missing call and
 * returns false. A dispatch this step drove to has no call interrupted yet.
 */
async function collectToolResults(step: Step): Promise<boolean> {
  const context = step.cursor.getSnapshot().context;
  // Read with the lease (or the save) at this dispatch: nothing ran in between.
  const { todo, committed, missing, interrupted, running } = await callsAtDispatch(
    step.deps.backend,
    context,
    { prefetched: step.saves.takeRaw(context.iteration), drove: step.arrival === "drove" },
  );
  if (missing.length > 0) {
    if (running.length === 0) {
      step.cursor.send({
        type: "INTERRUPTED",
        calls: missing.map((state) => ({
          toolCallId: state.call.id,
          reason: interrupted.get(callKey(state)) ?? "",
          inputHash: approvalHash(context.runId, state.call, step.env.approvalKey),
        })),
      });
      await persistAtBoundary(step, "dispatch");
      return true;
    }
    await queueToolJobs(step.deps.backend, toolJobs(step, running));
    return false;
  }
  const raw = recordById([
    ...todo.flatMap((state) => {
      const result = entryById(committed, state.call.id);
      return result === undefined ? [] : [[state.call.id, result] as const];
    }),
    ...personResponses(context.calls).map((result) => [result.toolCallId, result] as const),
  ]);
  step.cursor.send({ type: "TOOLS_DISPATCHED", raw });
  step.saves.handed(raw);
  await persistAtBoundary(step, "dispatch");
  return true;
}

/** The tool jobs that run `calls` of the run's current iteration. */
const toolJobs = (step: Step, calls: readonly CallState[]): ToolJob[] =>
  toolJobsFor(step.saves.record, step.cursor.getSnapshot().context.iteration, calls);

/** After a step that moved the run to its end: tell the hooks. */
async function announce(step: Step): Promise<void> {
  const { result, status } = step.saves.record;
  if (result !== null && isTerminal(status)) await finishRun(step.env, result);
}
