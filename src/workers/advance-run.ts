import { RunCancelledError } from "../core/errors.js";
import { entryById, recordById } from "../core/id-record.js";
import type { ToolResult } from "../core/values.js";
import { currentPhase, drive, type RunActor, restoreRunActor } from "../engine/drive.js";
import { ProviderCallDeferred } from "../engine/provider-gate.js";
import { notify, type RunEnv } from "../engine/run-env.js";
import type { RunEvent } from "../engine/run-events.js";
import { decisionApplies, finishRun, startRun } from "../engine/run-lifecycle.js";
import { statusOf, toRunResult } from "../engine/run-result.js";
import { HookEvent } from "../hooks/events.js";
import {
  type CallState,
  type Decision,
  type FinalPhase,
  isEffectBoundary,
  type Phase,
  persistedRunSnapshot,
  runsHandler,
} from "../machines/run-machine.js";
import { withExtractedContext } from "../observability/propagation.js";
import { traceRun } from "../observability/spans.js";
import { approvalHash } from "../permissions/input-hash.js";
import { abortedByShutdown } from "../store/active-runs.js";
import type { OpenedRun } from "../store/backend.js";
import { checkpointOf, type StoredCheckpoint } from "../store/checkpoint.js";
import { BackendError } from "../store/errors.js";
import { type EventPublisher, eventPublisher } from "../store/event-publisher.js";
import { markLiveContext } from "../store/live-context.js";
import { callKey } from "../store/run-view.js";
import {
  isTerminal,
  type PersistedSnapshot,
  priorityOf,
  type RunRecord,
  type ToolJob,
} from "../store/schemas.js";
import { conversationOf } from "../store/stored-record.js";
import { scheduleApprovalTimeout } from "./approval-timeout.js";
import { agentFor, type WorkerDeps } from "./worker-deps.js";

/** Tool handlers run on tool-dispatch jobs, so a step hands the run on at `dispatch`. */
const STOP_AT: ReadonlySet<Phase> = new Set<Phase>(["dispatch"]);

/**
 * The lease a step holds, as its saves leave it: a step's last save (the run finished, or
 * handed to its tool jobs) gives the lease up in the same write (`released`, with whether a
 * wake-up was left meanwhile) and calls `onRelease`.
 */
export interface HeldLease {
  released?: { wake: boolean };
  onRelease?: () => void;
}

/** An effect boundary the run reached: the run as it stood there. */
interface Boundary {
  readonly record: RunRecord;
  readonly phase: Phase | FinalPhase;
  readonly status: ReturnType<typeof statusOf>;
}

/** A save of the step: sent once the one before it was sent; `done` rejects when it failed. */
interface SaveSlot {
  readonly sent: Promise<void>;
  readonly done: Promise<void>;
}

/** One step's working state: the run as at its last boundary, and the actor advancing it. */
interface Step {
  readonly deps: WorkerDeps;
  readonly token: number;
  readonly actor: RunActor;
  readonly env: RunEnv;
  readonly controller: AbortController;
  /** The run's events as they happen (deltas while the provider streams), in order. */
  readonly publisher: EventPublisher;
  /** The run as at its last effect boundary (saved, or saved behind). */
  record: RunRecord;
  /** How many of the run's messages the store holds once the saves sent are applied. */
  storedMessages: number;
  /** The step's last save, while it may be under way. */
  latestSave: SaveSlot | undefined;
  /** Saves nobody waits for (`persist`'s `behind`): the step's end does. */
  behind: Array<Promise<void>>;
  /** Raw results read with the lease, for the dispatch the step opened at (used once). */
  prefetched: OpenedRun["raw"];
  /** True once this step saved a boundary. */
  advanced: boolean;
  /** The raw results this step handed to the machine, for the next save's checkpoint. */
  raw?: Readonly<Record<string, ToolResult>> | undefined;
  /** True once this step drove the run on: a dispatch it enters has no tool job out yet. */
  drove: boolean;
  /** The lease, when the step may give it up with its last save. */
  readonly lease: HeldLease | undefined;
}

/**
 * Advances a run, under its lease `token`, as far as it can go: until it finishes, parks for
 * approval, or waits for tool jobs. Every effect boundary is saved (fenced) and emits
 * `CHECKPOINT`; events go to the run's log as they happen.
 */
export async function advanceRun(
  deps: WorkerDeps,
  runId: string,
  token: number,
  opened?: OpenedRun,
  rateLimitedSince?: number,
  lease?: HeldLease,
): Promise<RunRecord | undefined> {
  return withStep(deps, runId, token, opened, lease, async (step, starting) => {
    step.env.providerGate = deps.gates?.forStep(step.env, rateLimitedSince);
    // A run that failed as it started (it has no provider) is saved as such.
    if (starting && step.actor.getSnapshot().status !== "active") await persist(step);
    const { agent, sessionId, trace } = step.record;
    const { config, provider } = step.env;
    // Each step is an `invoke_agent` span in the trace the run was submitted in.
    await withExtractedContext(trace, () =>
      traceRun(
        { agent, runId, sessionId, model: config.model, provider: provider?.name },
        () => proceed(step).catch((error: unknown) => saveDeferred(step, error)),
        () => spanOutcome(step),
      ),
    );
  });
}

/**
 * Fails a run that a failed step left stuck (see `giveUpStep`), under its lease `token`: one
 * that is queued or running anywhere but at `dispatch`. True when it failed the run.
 */
export async function failStuckRun(
  deps: WorkerDeps,
  runId: string,
  token: number,
  reason: string,
  opened?: OpenedRun,
): Promise<boolean> {
  let failed = false;
  await withStep(deps, runId, token, opened, undefined, async (step) => {
    const phase = step.actor.getSnapshot().value as Phase;
    if (phase === "dispatch" || phase === "awaitingApproval") return;
    const message = `The run's step failed for good and will not be retried: ${reason}.`;
    step.actor.send({ type: "FAIL", error: new BackendError(message, { phase }).toJSON() });
    await persist(step);
    failed = true;
  });
  return failed;
}

/**
 * Opens a step on an unfinished run (its actor, started or restored, and its environment),
 * runs `body`, then publishes what is left and announces where the run ended up. Resolves with
 * the run as the step left it (none when unknown).
 */
async function withStep(
  deps: WorkerDeps,
  runId: string,
  token: number,
  opened: OpenedRun | undefined,
  lease: HeldLease | undefined,
  body: (step: Step, starting: boolean) => Promise<void>,
): Promise<RunRecord | undefined> {
  const record = opened === undefined ? await deps.backend.loadRun(runId) : opened.record;
  if (record === undefined) {
    deps.logger.warn({ runId }, "a step for an unknown run; ignored");
    return undefined;
  }
  if (isTerminal(record.status)) return record;
  const agent = agentFor(deps, record.agent, runId);
  const controller = new AbortController();
  const untrack = deps.active.track(runId, controller);
  const publisher = eventPublisher(deps.backend, runId);
  const env = agent.runEnv({
    runId,
    sessionId: record.sessionId,
    signal: controller.signal,
    emit: publisher.emit,
  });
  try {
    const cancelled = opened?.cancelRequested ?? (await deps.backend.cancelRequested(runId));
    if (cancelled) controller.abort();
    const starting = record.snapshot === null;
    const actor = starting ? await startActor(record, env) : restoreRunActor(record.snapshot);
    const step: Step = {
      deps,
      token,
      actor,
      env,
      controller,
      publisher,
      record,
      storedMessages: conversationOf(record).length,
      latestSave: undefined,
      behind: [],
      prefetched: opened?.raw,
      advanced: false,
      drove: false,
      lease,
    };
    try {
      await body(step, starting);
      if (step.behind.length > 0) await Promise.all(step.behind);
      await publisher.flush();
      if (step.advanced) await announce(step);
      const { approvalTimeoutMs } = env.config;
      if (step.advanced && step.record.status === "awaiting_approval" && approvalTimeoutMs) {
        await scheduleApprovalTimeout(deps, step.record, approvalTimeoutMs);
      }
      return step.record;
    } finally {
      actor.stop();
    }
  } finally {
    untrack();
  }
}

function startActor(record: RunRecord, env: RunEnv): Promise<RunActor> {
  return startRun(env, {
    runId: record.runId,
    sessionId: record.sessionId,
    input: record.input.text ?? record.input.messages,
    messages: record.input.messages,
    maxIterations: record.input.maxIterations,
  });
}

async function proceed(step: Step): Promise<void> {
  for (;;) {
    const snapshot = step.actor.getSnapshot();
    if (snapshot.status !== "active") return;
    const phase = snapshot.value as Phase;
    if (step.lease?.released !== undefined) {
      // The last save gave the lease up; entering dispatch, it queued the tool jobs with it.
      // A cancel that came meanwhile is the run's next step's to apply.
      if (phase !== "dispatch" || step.controller.signal.aborted) await handOn(step);
      return;
    }
    if (step.controller.signal.aborted) {
      step.actor.send({ type: "CANCEL", error: new RunCancelledError(phase).toJSON() });
      await persist(step);
    } else if (phase === "awaitingApproval") {
      if (!(await applyDecisions(step))) return;
    } else if (phase === "dispatch") {
      if (!(await collectToolResults(step, step.drove))) return;
    } else {
      step.drove = true;
      await drive(step.actor, step.env, {
        stopAt: STOP_AT,
        onBoundary: (_actor, left) => persistAtBoundary(step, left),
      });
    }
  }
}

/**
 * A model call deferred for its rate limit (`ProviderCallDeferred`) ends the step: the run is
 * saved where it waits (at `provider`) unless it was saved there already, so that what ran
 * before the call (the run's start and `AGENT_START`, the iteration's start, compose) does not
 * run again when the run comes back. Then the deferral goes on to the step.
 */
async function saveDeferred(step: Step, error: unknown): Promise<never> {
  if (error instanceof ProviderCallDeferred && currentPhase(step.actor) !== step.record.phase) {
    await persist(step);
  }
  throw error;
}

/** A step that gave its lease up and finds more to do: the run's next step does it. */
async function handOn(step: Step): Promise<void> {
  await step.deps.backend.enqueueStep(step.record.runId, {
    ...priorityOf(step.record),
    agent: step.record.agent,
  });
}

/**
 * Whether a save is the step's last: the run finished, or it enters `dispatch` driven by this
 * step with calls for tool jobs to run (none can be out yet, so the step only hands them on).
 */
function lastSave(step: Step, phase: Phase | FinalPhase, status: RunRecord["status"]): boolean {
  if (step.lease === undefined) return false;
  if (isTerminal(status)) return true;
  return (
    phase === "dispatch" && step.drove && step.actor.getSnapshot().context.calls.some(runsHandler)
  );
}

/**
 * After the machine left phase `left`: saves the run if it now stands at an effect boundary.
 * Nothing waits for the save after a provider response or after tool results entered the
 * conversation: what follows either up to the next save is middleware and the provider call,
 * which a crash may repeat, and the next save is applied after it. A provider response is
 * out of the process before `afterLlmCall` runs (a middleware that kills the process does not
 * cost a second model call); the results' save may leave with the writes that follow it.
 */
async function persistAtBoundary(step: Step, left: Phase): Promise<void> {
  const entered = step.actor.getSnapshot().value as Phase | FinalPhase;
  if (!isEffectBoundary(entered, left)) return;
  if (entered === "afterLlm") await persist(step, { behind: "left" });
  else if (entered === "compose") await persist(step, { behind: "sent" });
  else await persist(step);
}

/**
 * Saves the run (fenced by the lease) and emits `CHECKPOINT`. A parked or finished run's
 * `approval_required` or `result` event is appended in the same atomic write, after every
 * event emitted before it: no reader sees a result before the state it reports is saved.
 * `behind`: returns without waiting for the save to be applied, once it is sent (`"sent"`: it
 * may still sit in the connection's batch for this turn) or once it has left the process
 * (`"left"`).
 */
async function persist(step: Step, options: { behind?: "sent" | "left" } = {}): Promise<void> {
  const snapshot = step.actor.getSnapshot();
  const phase = snapshot.value as Phase | FinalPhase;
  const status = statusOf(phase);
  markLiveContext(snapshot.context);
  const record: RunRecord = {
    ...step.record,
    status,
    phase,
    // Plain data already (the machine's context holds no actors): backends serialise it.
    snapshot: persistedRunSnapshot(snapshot) as unknown as PersistedSnapshot,
    result: status === "running" ? null : toRunResult(snapshot.context, status),
    updatedAt: step.deps.clock.now(),
  };
  // A process that gave up on this job at its shutdown deadline leaves the run as it stands.
  if (abortedByShutdown(step.controller.signal)) throw step.controller.signal.reason;
  const checkpoint = checkpointOf(record, conversationOf(step.record).length, step.raw);
  step.record = record;
  step.raw = undefined;
  const done = save(step, { record, phase, status }, checkpoint);
  if (options.behind === undefined) return done;
  // Its failure reaches the step's end (and fences the saves after it).
  done.catch(() => {});
  step.behind.push(done);
  await step.latestSave?.sent;
  if (options.behind === "sent") return;
  // A backend that batches its writes (Redis: `coalesceWrites`) sends a turn's writes at the
  // turn's end: by the next turn, the save has left the process.
  await new Promise((resolve) => setImmediate(resolve));
}

/**
 * One save, sent right behind the step's save before it, without waiting for that one's reply
 * (`RunBackend.saveRun` applies a run's saves in the order they are issued); its outcome is
 * applied, and `CHECKPOINT` emitted, after the one before it.
 */
function save(step: Step, boundary: Boundary, checkpoint: StoredCheckpoint): Promise<void> {
  const previous = step.latestSave;
  let markSent = () => {};
  const sent = new Promise<void>((resolve) => {
    markSent = resolve;
  });
  const done = sendSave(step, boundary, checkpoint, previous, markSent);
  done.then(markSent, markSent);
  step.latestSave = { sent, done };
  return done;
}

async function sendSave(
  step: Step,
  { record, phase, status }: Boundary,
  checkpoint: StoredCheckpoint,
  previous: SaveSlot | undefined,
  markSent: () => void,
): Promise<void> {
  // No await without a save before it: the run's end hooks follow its final save closely.
  if (previous !== undefined) await previous.sent;
  // Events not sent yet go out with the save, before its outcome event.
  const pending = await step.publisher.take();
  const release = lastSave(step, phase, status);
  // Entering dispatch with calls for tool jobs: they are queued right behind the save (and so
  // behind every save before it).
  const tools = release && !isTerminal(status) ? step.actor.getSnapshot().context.calls : [];
  const thenTools = toolJobs(step, tools.filter(runsHandler));
  const storedMessages = step.storedMessages;
  step.storedMessages = conversationOf(record).length;
  const saving = step.deps.backend.saveRun(record.runId, step.token, record, {
    events: [...pending, ...outcomeEvents(record)],
    storedMessages,
    checkpoint,
    ...(release ? { release } : {}),
    ...(thenTools.length > 0 ? { thenTools } : {}),
  });
  markSent();
  const outcome = await saving;
  if (previous !== undefined) await previous.done.catch(() => {});
  step.prefetched =
    outcome.raw === undefined
      ? undefined
      : { iteration: step.actor.getSnapshot().context.iteration, results: outcome.raw };
  step.advanced = true;
  if (step.lease !== undefined && outcome.released !== undefined) {
    step.lease.released = outcome.released;
    step.lease.onRelease?.();
  }
  if (outcome.cancelRequested) step.controller.abort();
  await notify(step.env, HookEvent.CHECKPOINT, () => ({
    sessionId: record.sessionId,
    runId: record.runId,
    status,
    phase,
  }));
}

/** A parked run: applies the recorded decisions on its pending calls; false when there are none. */
async function applyDecisions(step: Step): Promise<boolean> {
  const context = step.actor.getSnapshot().context;
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
    decisions.push([
      state.call.id,
      {
        decision: stored.decision,
        ...(stored.reason === undefined ? {} : { reason: stored.reason }),
        ...(stored.by === undefined ? {} : { by: stored.by }),
      },
    ]);
  }
  if (decisions.length === 0) return false;
  step.actor.send({ type: "DECIDED", decisions: recordById(decisions) });
  await persistAtBoundary(step, "awaitingApproval");
  return true;
}

/**
 * Phase `dispatch`: when every permitted call has a committed raw result, hands them to the
 * machine; when every call still missing one was interrupted by a crash under recovery `ask`,
 * parks the run for a person (`INTERRUPTED`); otherwise queues a tool job per missing call and
 * returns false. `entered`: this step just entered dispatch, so no call can be interrupted yet.
 */
async function collectToolResults(step: Step, entered: boolean): Promise<boolean> {
  const context = step.actor.getSnapshot().context;
  const { backend } = step.deps;
  const todo = context.calls.filter(runsHandler);
  // Read with the lease when the step opened at this dispatch: nothing ran in between.
  const prefetched =
    step.prefetched?.iteration === context.iteration ? step.prefetched.results : undefined;
  step.prefetched = undefined;
  const committed =
    todo.length === 0
      ? {}
      : (prefetched ?? (await backend.rawResults(context.runId, context.iteration)));
  const missing = todo.filter((state) => entryById(committed, state.call.id) === undefined);
  if (missing.length > 0) {
    const interrupted = entered
      ? new Map<string, string>()
      : await backend.interruptedCalls(context.runId, context.iteration);
    const running = missing.filter((state) => !interrupted.has(callKey(state)));
    if (running.length === 0) {
      step.actor.send({
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
    await Promise.all(toolJobs(step, running).map((job) => backend.enqueueTool(job)));
    return false;
  }
  const raw = recordById(
    todo.flatMap((state) => {
      const result = entryById(committed, state.call.id);
      return result === undefined ? [] : [[state.call.id, result] as const];
    }),
  );
  step.actor.send({ type: "TOOLS_DISPATCHED", raw });
  step.raw = raw;
  await persistAtBoundary(step, "dispatch");
  return true;
}

/** The tool jobs that run `calls` of the run's current iteration. */
function toolJobs(step: Step, calls: readonly CallState[]): ToolJob[] {
  const { runId, iteration } = step.actor.getSnapshot().context;
  return calls.map((state) => ({
    runId,
    iteration,
    toolCallId: state.call.id,
    agent: step.record.agent,
    tool: state.call.name,
    ...(state.interruptions === undefined ? {} : { attempt: state.interruptions }),
    ...priorityOf(step.record),
  }));
}

/** The event a save publishes with the state it reports: a parked or finished run's outcome. */
function outcomeEvents(record: RunRecord): RunEvent[] {
  const { result } = record;
  if (result === null) return [];
  if (result.status === "awaiting_approval") {
    return [{ type: "approval_required", pending: result.pending }];
  }
  return isTerminal(record.status) ? [{ type: "result", result }] : [];
}

/** Where a step left the run, for its span. */
function spanOutcome(step: Step) {
  const { value, context } = step.actor.getSnapshot();
  return {
    status: statusOf(value as Phase | FinalPhase),
    error: context.error,
    usage: context.usage,
    iterations: context.iteration,
  };
}

/** After a step that moved the run to its end: tell the hooks. */
async function announce(step: Step): Promise<void> {
  const { result } = step.record;
  if (result !== null && isTerminal(step.record.status)) await finishRun(step.env, result);
}
