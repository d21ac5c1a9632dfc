import type { Logger } from "pino";
import { defaultLogger } from "../core/default-logger.js";
import type { RuntimeDeps } from "../core/deps.js";
import { ApprovalError, ConfigError } from "../core/errors.js";
import { randomUUID } from "../core/node-crypto.js";
import type { Message } from "../core/values.js";
import type { Agent } from "../engine/agent.js";
import type { RecorderEntry } from "../features/recorder/entry.js";
import { ActiveRuns } from "../store/active-runs.js";
import type { QueueConcurrency, RunBackend } from "../store/backend.js";
import {
  BackendError,
  RunActiveError,
  RunNotFoundError,
  RuntimeStateError,
} from "../store/errors.js";
import { type Overview, type OverviewOptions, parseOverviewOptions } from "../store/overview.js";
import {
  type EventPage,
  type EventReadOptions,
  type NumberedEvent,
  parseEventReadOptions,
} from "../store/run-feeds.js";
import { type ListOptions, parseListOptions, type RunPage } from "../store/run-query.js";
import { isTerminal, priorityOf, type RunRecord } from "../store/schemas.js";
import { type RunDetail, type RunSummary, runDetail } from "../store/summary.js";
import { describeIssues } from "../tools/validate.js";
import { ApprovalNotifications } from "./approval-notifications.js";
import type { DecisionOptions, RequestedDecision, RespondOptions } from "./approvals.js";
import { type BackendQueue, backendQueues } from "./backend-queue.js";
import { type CancelOptions, parseCancelOptions } from "./cancel-options.js";

// What `queues()` gives, for the dashboard, which reaches the runtime through this module alone.
export type { BackendQueue };

import { checkChildAgents } from "./child-agents.js";
import { decideCall } from "./decide-call.js";
import { watchEventLoopLag } from "./event-loop-lag.js";
import { wakeExisting, withRunId } from "./existing-run.js";
import { type RuntimeLimits, resolveLimits } from "./limits.js";
import { memoryBackend } from "./memory-backend.js";
import { newRunRecord, type RunRecordSource } from "./new-run-record.js";
import { withGivenApprovals } from "./quorum-view.js";
import { RunHandle } from "./run-handle.js";
import { RunTraces } from "./run-trace.js";
import { asksForTree, cancelDescendants, listTree, treeDetail } from "./run-trees.js";
import {
  type AgentRuntimeOptions,
  type DeleteSessionResult,
  type PruneOptions,
  PruneOptionsSchema,
  type PruneResult,
  parseSubmitOptions,
  RuntimeOptionsSchema,
  requireId,
  type StartOptions,
  type SubmitOptions,
  stepOptions,
} from "./runtime-options.js";
import { agentsByName, queueConcurrency } from "./runtime-setup.js";
import { runtimeProcessors, runtimeWorkerDeps } from "./runtime-workers.js";
import { sessionRunIds } from "./session-runs.js";

export type { CancelOptions } from "./cancel-options.js";
export type {
  AgentRuntimeOptions,
  DeleteSessionResult,
  PruneOptions,
  PruneResult,
  StartOptions,
  SubmitOptions,
} from "./runtime-options.js";
export { DEFAULT_CONCURRENCY } from "./runtime-options.js";

/**
 * Many concurrent, durable agent runs: each run is a machine advanced by workers through the
 * backend's queues, parked in the store while it waits for a person, and readable from any
 * process that shares the backend.
 * @example
 * const runtime = new AgentRuntime({ agents: [agent], backend: redisBackend({ url }) });
 * await runtime.start();
 * const handle = await runtime.submit("support", "Where is my order?");
 * const result = await handle.result();
 */
export class AgentRuntime implements AsyncDisposable {
  readonly backend: RunBackend;
  readonly logger: Logger;
  readonly #agents: ReadonlyMap<string, Agent<unknown>>;
  readonly #concurrency: QueueConcurrency;
  readonly #deps: RuntimeDeps;
  readonly #limits: Required<RuntimeLimits>;
  readonly #active = new ActiveRuns();
  readonly #notifications: ApprovalNotifications;
  readonly #traces: RunTraces;
  #state: "created" | "starting" | "started" | "closed" = "created";
  #stopLagWatch: (() => void) | undefined;

  constructor(options: AgentRuntimeOptions) {
    const parsed = RuntimeOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ConfigError(`Invalid AgentRuntime options: ${describeIssues(parsed.error.issues)}`);
    }
    this.#agents = agentsByName(options.agents);
    this.backend = options.backend ?? memoryBackend();
    this.#concurrency = queueConcurrency(options.concurrency);
    this.logger = options.logger ?? defaultLogger("harnessx-runtime");
    this.#limits = resolveLimits(options.limits);
    this.#notifications = new ApprovalNotifications({ ...options, logger: this.logger });
    this.#deps = {
      clock: options.deps?.clock ?? { now: () => Date.now() },
      generateId: options.deps?.generateId ?? randomUUID,
    };
    this.#traces = new RunTraces(this.backend, this.#deps.clock, this.logger);
  }

  /** Connects the backend and, unless `workers: false`, starts this process's workers. */
  async start(options: StartOptions = {}): Promise<void> {
    if (this.#state !== "created") {
      throw new RuntimeStateError(
        `AgentRuntime.start() called twice (the runtime is ${this.#state}).`,
      );
    }
    this.#state = "starting";
    try {
      checkChildAgents(this.#agents);
    } catch (error) {
      this.#state = "created";
      throw error;
    }
    // The agents' saved state and recordings live in the backend, so that they travel with
    // their runs to any process; then each agent installs its extensions once, as a direct run
    // would on its first run.
    for (const agent of this.#agents.values()) {
      agent.extensions.useStateStore(this.backend.extensionState);
      agent.recorder?.useSink?.(this.backend.recordings);
    }
    await Promise.all([...this.#agents.values()].map((agent) => agent.start()));
    const deps = runtimeWorkerDeps({
      records: this.#records(),
      logger: this.logger,
      active: this.#active,
      limits: this.#limits,
      notifications: this.#notifications,
    });
    await this.backend.start({
      concurrency: this.#concurrency,
      logger: this.logger,
      onCancel: (runId) => this.#active.abort(runId),
      ...((options.workers ?? true)
        ? {
            processors: runtimeProcessors(deps, this.#notifications),
          }
        : {}),
    });
    if (options.workers ?? true) {
      this.#stopLagWatch = watchEventLoopLag(this.backend.lockDurationMs, this.logger);
    }
    this.#state = "started";
  }

  /**
   * Stores a new run of `agentName` and queues its first step. With `runId`, idempotent: when a
   * run with that id exists (of the same agent), nothing is stored and a handle to it is
   * returned. A rejection carries the run id it tried (`error.runId`): the run may be stored
   * even so (Redis answered too late), so retry with `{ runId: error.runId }`, never without.
   * @example
   * const handle = await runtime.submit("support", "Where is my order?", { runId: orderEventId });
   */
  async submit(
    agentName: string,
    input: string | readonly Message[],
    options: SubmitOptions = {},
  ): Promise<RunHandle> {
    this.#requireStarted("submit");
    const parsed = parseSubmitOptions(options);
    const runId = parsed.runId ?? this.#deps.generateId();
    let record: RunRecord | undefined;
    try {
      await this.#traces.ready();
      record = newRunRecord(this.#records(), agentName, input, parsed, runId);
      const step = { ...stepOptions(parsed), agent: agentName };
      if (!(await this.backend.submitRun(record, step))) {
        this.#traces.drop([record]);
        await wakeExisting(this.backend, runId, agentName, step);
      }
      return new RunHandle(runId, this.backend);
    } catch (error) {
      if (record !== undefined) this.#traces.drop([record]);
      throw withRunId(error, runId);
    }
  }

  /**
   * Stores many new runs of `agentName`, one per input, and queues their first steps in bulk
   * (on Redis: a script call and a BullMQ `addBulk` per 500 runs). `options` apply to every run;
   * each run gets its own session unless `sessionId` is given. Handles in the inputs' order.
   * @example
   * const handles = await runtime.submitMany("support", questions, { priority: 5 });
   * const results = await Promise.all(handles.map((handle) => handle.result()));
   */
  async submitMany(
    agentName: string,
    inputs: ReadonlyArray<string | readonly Message[]>,
    options: SubmitOptions = {},
  ): Promise<RunHandle[]> {
    this.#requireStarted("submitMany");
    if (!Array.isArray(inputs)) throw new ConfigError("submitMany() takes an array of inputs.");
    const parsed = parseSubmitOptions(options);
    if (parsed.runId !== undefined) {
      throw new ConfigError("submitMany() takes no runId: each run gets its own id.");
    }
    const source = this.#records();
    await this.#traces.ready();
    const records = inputs.map((input) => newRunRecord(source, agentName, input, parsed));
    const existing = await this.backend
      .submitRuns(records, { ...stepOptions(parsed), agent: agentName })
      .catch((error: unknown) => {
        this.#traces.drop(records);
        throw error;
      });
    if (existing.length > 0) {
      const refused = new Set(existing);
      this.#traces.drop(records.filter((record) => refused.has(record.runId)));
      throw new BackendError(
        `Runs ${existing.map((id) => `"${id}"`).join(", ")} exist already: run ids must be unique.`,
      );
    }
    return records.map((record) => new RunHandle(record.runId, this.backend));
  }

  /** What builds the records of this runtime's runs. */
  #records(): RunRecordSource {
    return {
      agents: this.#agents,
      backend: this.backend,
      deps: this.#deps,
      maxInputBytes: this.#limits.maxInputBytes,
      traces: this.#traces,
    };
  }

  /** A handle to an existing run (from this or any other process). */
  handle(runId: string): RunHandle {
    return new RunHandle(runId, this.backend);
  }

  /**
   * Allows a pending call of a parked run; the run continues on a worker. With `input`, the
   * person's edit: the handler receives it (checked against the tool's schema and the policy
   * first). On a quorum call this counts one approval; the call runs once enough people agree.
   */
  async approve(runId: string, toolCallId: string, options: DecisionOptions = {}): Promise<void> {
    const { input, ...decider } = options;
    await this.#decide(runId, toolCallId, { decision: "allow", input }, decider);
  }

  /** Denies a pending call of a parked run; the model sees an error result for it. */
  async deny(runId: string, toolCallId: string, options: DecisionOptions = {}): Promise<void> {
    if (options.input !== undefined) {
      throw new ApprovalError("approval_invalid", "A deny takes no `input`: only approve edits.");
    }
    await this.#decide(runId, toolCallId, { decision: "deny" }, options);
  }

  /**
   * Answers a pending call in its tool's place: `content` becomes the call's result (within
   * `limits.maxToolResultBytes`), the handler never runs, and the run continues on a worker.
   */
  async respond(runId: string, toolCallId: string, options: RespondOptions): Promise<void> {
    const { content, isError, ...decider } = options;
    await this.#decide(runId, toolCallId, { decision: "respond", content, isError }, decider);
  }

  /**
   * Cancels a run that has not finished. The jobs working on it, in any process, have their
   * signals aborted at once (the provider call and running handlers see it), and the run ends
   * `cancelled` without waiting for a provider or handler that ignores its signal. `by` (who
   * cancels) is kept with the run: `RunDetail.cancelledBy` (the first one asked, when several).
   * @example
   * await runtime.cancel(runId, { by: "ops-lead" });
   */
  async cancel(runId: string, options: CancelOptions = {}): Promise<void> {
    this.#requireStarted("cancel");
    const by = parseCancelOptions(options);
    const record = await this.backend.loadRun(runId);
    if (record === undefined) throw new RunNotFoundError(runId);
    if (isTerminal(record.status)) return;
    await this.backend.requestCancel(runId, by);
    this.#active.abort(runId);
    await this.backend.enqueueStep(runId, { ...priorityOf(record), agent: record.agent });
    await cancelDescendants(this.backend, runId);
  }

  /**
   * One page of stored runs' summaries, newest first, filtered by `status`, `agent` and
   * `sessionId`; pass `nextCursor` back as `cursor` for the next page. Its cost does not grow
   * with the runs stored. A bad option or cursor is refused with `ConfigError`.
   * @example
   * const page = await runtime.list({ status: "awaiting_approval", limit: 20 });
   * const next = page.nextCursor && (await runtime.list({ status: "awaiting_approval", limit: 20, cursor: page.nextCursor }));
   */
  async list(options: ListOptions = {}): Promise<RunPage> {
    this.#requireStarted("list");
    const page = asksForTree(options)
      ? await listTree(this.backend, options)
      : await this.backend.listRuns(parseListOptions(options));
    const runs = await Promise.all(page.runs.map((run) => withGivenApprovals(this.backend, run)));
    return { ...page, runs };
  }

  /**
   * Totals over a window (`1h`, `24h` or `7d`, default `24h`): the runs created in it by status,
   * their runs and tokens by agent, their failures by error code, and the runs waiting for a
   * person now with the oldest wait. Read from counters kept per time bucket as runs are
   * written, never by reading runs: its cost does not grow with the runs stored.
   * @example
   * const { counts, approvals } = await runtime.overview({ window: "1h" });
   */
  async overview(options: OverviewOptions = {}): Promise<Overview> {
    this.#requireStarted("overview");
    const { window } = parseOverviewOptions(options);
    return this.backend.overview({ window, now: this.#deps.clock.now() });
  }

  /**
   * The events of a run's log stored now, from position `after` (default 0) on, without
   * waiting: `{ events, next }`, where `next` is the `after` of the next read. Throws
   * `RunNotFoundError` for an unknown run.
   * @example
   * let page = await runtime.events(runId);
   * page = await runtime.events(runId, { after: page.next });
   */
  async events(runId: string, options: EventReadOptions = {}): Promise<EventPage> {
    this.#requireStarted("events");
    const { after, limit } = parseEventReadOptions(options);
    if ((await this.backend.loadRun(runId)) === undefined) throw new RunNotFoundError(runId);
    return this.backend.readEvents(runId, after, limit);
  }

  /**
   * A run's events from position `after` (default 0) on, each with its position, live from any
   * process, ending after its final `result`; what `GET /api/runs/:id/events` streams.
   */
  async followEvents(
    runId: string,
    options: Pick<EventReadOptions, "after"> = {},
  ): Promise<AsyncIterable<NumberedEvent>> {
    this.#requireStarted("followEvents");
    const { after } = parseEventReadOptions(options);
    if ((await this.backend.loadRun(runId)) === undefined) throw new RunNotFoundError(runId);
    return this.backend.followEvents(runId, after);
  }

  /**
   * Every run's summary each time it is created or saved (its status or phase changed, or it
   * progressed), from every process of the backend. Resolves once it listens: no change after
   * that is missed. The iteration ends when `signal` aborts.
   * @example
   * const stop = new AbortController();
   * for await (const run of await runtime.watch({ signal: stop.signal })) console.log(run.runId, run.status);
   */
  async watch(options: { signal: AbortSignal }): Promise<AsyncIterable<RunSummary>> {
    this.#requireStarted("watch");
    return this.backend.watchRuns(options.signal);
  }

  /**
   * The BullMQ queues this runtime's jobs go through (Redis backend), for queue views such as
   * bull-board; none with the memory backend.
   */
  queues(): BackendQueue[] {
    this.#requireStarted("queues");
    return backendQueues(this.backend);
  }

  /**
   * A stored run in full: its summary, its conversation, its audit trail of decisions and its
   * timeline (`checkpoints`, `modelCalls` with tokens, `toolCalls` with raw and processed
   * results). Throws `RunNotFoundError` for an unknown run.
   */
  async get(runId: string): Promise<RunDetail> {
    this.#requireStarted("get");
    const [record, decisions, checkpoints, cancelledBy] = await Promise.all([
      this.backend.loadRun(runId),
      this.backend.auditTrail(runId),
      this.backend.checkpoints(runId),
      this.backend.cancelledBy(runId),
    ]);
    if (record === undefined) throw new RunNotFoundError(runId);
    const detail = runDetail(record, decisions, checkpoints, cancelledBy);
    return withGivenApprovals(this.backend, await treeDetail(this.backend, detail));
  }

  /**
   * The run's flight recording, in order, as its agent's `FlightRecorder` stored it (redacted)
   * from whichever processes advanced it: the same entries `recorder.entries(runId)` gives for
   * a direct run. Empty for a run whose agent has no recorder; `RunNotFoundError` for an
   * unknown run.
   * @example
   * const provider = ReplayProvider.fromRecording(await runtime.recording(runId));
   */
  async recording(runId: string): Promise<RecorderEntry[]> {
    this.#requireStarted("recording");
    const [record, entries] = await Promise.all([
      this.backend.loadRun(runId),
      this.backend.recordings.entries(runId),
    ]);
    if (record === undefined) throw new RunNotFoundError(runId);
    return entries;
  }

  /**
   * Deletes the runs that finished before `finishedBefore` (ms since the epoch): their records,
   * summaries, index entries, audit trails and every other key. Runs still going are kept; a run
   * whose stored summary cannot be read is skipped and counted in `unreadable` (`delete` removes it).
   */
  async prune(options: PruneOptions): Promise<PruneResult> {
    this.#requireStarted("prune");
    const parsed = PruneOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ConfigError(`Invalid prune options: ${describeIssues(parsed.error.issues)}`);
    }
    return await this.backend.pruneRuns(parsed.data.finishedBefore);
  }

  /**
   * Deletes one run and every key it has: a finished run, or one whose stored record cannot be
   * read (whatever its status). Rejects with `RunNotFoundError` for an unknown run and with
   * `RunActiveError` (`code: "run_active"`) for one still going: cancel it first.
   */
  async delete(runId: string): Promise<void> {
    this.#requireStarted("delete");
    const id = requireId(runId, "delete");
    const outcome = await this.backend.deleteRun(id);
    if (outcome === "unknown") throw new RunNotFoundError(id);
    if (outcome === "unfinished") throw new RunActiveError(id);
  }

  /**
   * Erases a session: deletes its finished runs (as `delete` does) and every value of extension
   * state saved for it, by any agent. Runs still going are kept: cancel them, then call it again.
   */
  async deleteSession(sessionId: string): Promise<DeleteSessionResult> {
    this.#requireStarted("deleteSession");
    const id = requireId(sessionId, "deleteSession");
    let runs = 0;
    for (const runId of await sessionRunIds(this.backend, id)) {
      if ((await this.backend.deleteRun(runId)) === "deleted") runs += 1;
    }
    const states = await this.backend.deleteSessionState(id);
    return { runs, states };
  }

  /**
   * Stops taking jobs, lets active ones finish until `timeoutMs`, then closes the backend, and
   * returns by that deadline: jobs still running then have their signals aborted and are left
   * as they stand. Runs are not cancelled: with Redis, another worker recovers them.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#stopLagWatch?.();
    await this.backend.close({
      timeoutMs: options.timeoutMs ?? 10_000,
      onDeadline: () => this.#active.shutDown(),
    });
    this.#traces.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #decide(
    runId: string,
    toolCallId: string,
    decision: RequestedDecision,
    options: Pick<DecisionOptions, "by" | "reason">,
  ): Promise<void> {
    this.#requireStarted(VERB_OF[decision.decision]);
    await decideCall(
      { backend: this.backend, agents: this.#agents, deps: this.#deps, limits: this.#limits },
      runId,
      toolCallId,
      decision,
      options,
    );
  }

  #requireStarted(action: string): void {
    if (this.#state !== "started") {
      throw new RuntimeStateError(
        `AgentRuntime.${action}() needs a started runtime (it is ${this.#state}): call start() first.`,
      );
    }
  }
}

const VERB_OF = { allow: "approve", deny: "deny", respond: "respond" } as const;
