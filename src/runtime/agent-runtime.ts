import { randomUUID } from "node:crypto";
import { type Logger, pino } from "pino";
import { z } from "zod";
import type { RuntimeDeps } from "../core/deps.js";
import { ConfigError } from "../core/errors.js";
import type { Message } from "../core/values.js";
import { Agent } from "../engine/agent.js";
import { injectTraceContext } from "../observability/propagation.js";
import { ActiveRuns } from "../store/active-runs.js";
import type { BackendQueue, RunBackend } from "../store/backend.js";
import {
  BackendError,
  RunNotFoundError,
  RuntimeStateError,
  UnknownAgentError,
} from "../store/errors.js";
import {
  type EventPage,
  type EventReadOptions,
  type NumberedEvent,
  parseEventReadOptions,
} from "../store/run-feeds.js";
import { type ListOptions, parseListOptions, type RunPage } from "../store/run-query.js";
import { isTerminal, RUN_RECORD_VERSION, type RunRecord } from "../store/schemas.js";
import { type RunDetail, type RunSummary, runDetail } from "../store/summary.js";
import { describeIssues } from "../tools/validate.js";
import { giveUpStep, runStep } from "../workers/run-step.js";
import { dispatchTool } from "../workers/tool-dispatch.js";
import type { WorkerDeps } from "../workers/worker-deps.js";
import { type DecisionOptions, recordDecision } from "./approvals.js";
import { memoryBackend } from "./memory-backend.js";
import { RunHandle } from "./run-handle.js";
import { toMessages } from "./run-input.js";

export interface AgentRuntimeOptions {
  /** The agents this runtime submits and advances runs for, found by `config.name`. */
  agents: readonly Agent[];
  /** @defaultValue memoryBackend() */
  backend?: RunBackend;
  /**
   * Jobs of each queue (run steps, tool calls) this process works on at once.
   * @defaultValue 16
   */
  concurrency?: number;
  /** @defaultValue pino at level `HARNESSX_LOG_LEVEL` or "warn" */
  logger?: Logger;
  /** Clock and id generator; tests inject their own. */
  deps?: Partial<RuntimeDeps>;
}

export interface StartOptions {
  /**
   * Run workers in this process; `false` only submits and reads runs.
   * @defaultValue true
   */
  workers?: boolean;
}

export interface SubmitOptions {
  /** @defaultValue a new UUID */
  sessionId?: string;
}

export interface PruneOptions {
  /** Deletes the runs that finished (completed, failed or cancelled) before this time (ms). */
  finishedBefore: number;
}

const PruneOptionsSchema = z.strictObject({ finishedBefore: z.number() });

const Options = z.object({
  agents: z.array(z.instanceof(Agent)),
  backend: z.looseObject({ kind: z.enum(["memory", "redis"]) }).optional(),
  concurrency: z.number().int().positive().optional(),
  logger: z.unknown().optional(),
  deps: z.unknown().optional(),
});

const traceOf = (carrier: Record<string, string>) =>
  Object.keys(carrier).length === 0 ? {} : { trace: carrier };

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
  readonly #agents: ReadonlyMap<string, Agent>;
  readonly #concurrency: number;
  readonly #deps: RuntimeDeps;
  readonly #active = new ActiveRuns();
  #state: "created" | "starting" | "started" | "closed" = "created";

  constructor(options: AgentRuntimeOptions) {
    const parsed = Options.safeParse(options);
    if (!parsed.success) {
      throw new ConfigError(`Invalid AgentRuntime options: ${describeIssues(parsed.error.issues)}`);
    }
    const agents = new Map<string, Agent>();
    for (const agent of options.agents) {
      if (agents.has(agent.config.name)) {
        throw new ConfigError(
          `Two agents are named "${agent.config.name}": a runtime finds agents by config.name.`,
        );
      }
      agents.set(agent.config.name, agent);
    }
    this.#agents = agents;
    this.backend = options.backend ?? memoryBackend();
    this.#concurrency = options.concurrency ?? 16;
    this.logger =
      options.logger ??
      pino({ name: "harnessx-runtime", level: process.env.HARNESSX_LOG_LEVEL ?? "warn" });
    this.#deps = {
      clock: options.deps?.clock ?? { now: () => Date.now() },
      generateId: options.deps?.generateId ?? randomUUID,
    };
  }

  /** Connects the backend and, unless `workers: false`, starts this process's workers. */
  async start(options: StartOptions = {}): Promise<void> {
    if (this.#state !== "created") {
      throw new RuntimeStateError(
        `AgentRuntime.start() called twice (the runtime is ${this.#state}).`,
      );
    }
    this.#state = "starting";
    // Each agent installs its extensions once, as a direct run would on its first run.
    await Promise.all([...this.#agents.values()].map((agent) => agent.start()));
    const deps: WorkerDeps = {
      backend: this.backend,
      agents: this.#agents,
      logger: this.logger,
      clock: this.#deps.clock,
      active: this.#active,
    };
    await this.backend.start({
      concurrency: this.#concurrency,
      logger: this.logger,
      onCancel: (runId) => this.#active.abort(runId),
      ...((options.workers ?? true)
        ? {
            processors: {
              step: (job, delivery) => {
                const giveUp = delivery.gaveUp ?? job.giveUp;
                return giveUp === undefined
                  ? runStep(deps, job, delivery)
                  : giveUpStep(deps, job.runId, giveUp);
              },
              tool: (job, delivery) => dispatchTool(deps, job, delivery),
            },
          }
        : {}),
    });
    this.#state = "started";
  }

  /** Stores a new run of `agentName` and queues its first step. */
  async submit(
    agentName: string,
    input: string | readonly Message[],
    options: SubmitOptions = {},
  ): Promise<RunHandle> {
    this.#requireStarted("submit");
    const agent = this.#agents.get(agentName);
    if (agent === undefined) throw new UnknownAgentError(agentName, [...this.#agents.keys()]);
    const messages = toMessages(input);
    const now = this.#deps.clock.now();
    const record: RunRecord = {
      schemaVersion: RUN_RECORD_VERSION,
      runId: this.#deps.generateId(),
      sessionId: options.sessionId ?? this.#deps.generateId(),
      agent: agentName,
      status: "queued",
      phase: "compose",
      input: {
        messages,
        ...(typeof input === "string" ? { text: input } : {}),
        maxIterations: agent.config.maxIterations,
      },
      snapshot: null,
      result: null,
      createdAt: now,
      updatedAt: now,
      ...traceOf(injectTraceContext()),
    };
    if (!(await this.backend.createRun(record))) {
      throw new BackendError(`A run "${record.runId}" exists already: run ids must be unique.`);
    }
    await this.backend.enqueueStep(record.runId, { agent: agentName });
    return new RunHandle(record.runId, this.backend);
  }

  /** A handle to an existing run (from this or any other process). */
  handle(runId: string): RunHandle {
    return new RunHandle(runId, this.backend);
  }

  /** Allows a pending call of a parked run; the run continues on a worker. */
  async approve(runId: string, toolCallId: string, options: DecisionOptions = {}): Promise<void> {
    await this.#decide(runId, toolCallId, "allow", options);
  }

  /** Denies a pending call of a parked run; the model sees an error result for it. */
  async deny(runId: string, toolCallId: string, options: DecisionOptions = {}): Promise<void> {
    await this.#decide(runId, toolCallId, "deny", options);
  }

  /**
   * Cancels a run that has not finished. The jobs working on it, in any process, have their
   * signals aborted at once (the provider call and running handlers see it), and the run ends
   * `cancelled` without waiting for a provider or handler that ignores its signal.
   */
  async cancel(runId: string): Promise<void> {
    this.#requireStarted("cancel");
    const record = await this.backend.loadRun(runId);
    if (record === undefined) throw new RunNotFoundError(runId);
    if (isTerminal(record.status)) return;
    await this.backend.requestCancel(runId);
    this.#active.abort(runId);
    await this.backend.enqueueStep(runId, { agent: record.agent });
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
    return this.backend.listRuns(parseListOptions(options));
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
    return this.backend.queues?.() ?? [];
  }

  /**
   * A stored run in full: its summary, its conversation and its audit trail of decisions.
   * Throws `RunNotFoundError` for an unknown run.
   */
  async get(runId: string): Promise<RunDetail> {
    this.#requireStarted("get");
    const [record, decisions] = await Promise.all([
      this.backend.loadRun(runId),
      this.backend.auditTrail(runId),
    ]);
    if (record === undefined) throw new RunNotFoundError(runId);
    return runDetail(record, decisions);
  }

  /**
   * Deletes the runs that finished before `finishedBefore` (ms since the epoch): their records,
   * summaries, index entries, audit trails and every other key. Runs still going are kept.
   */
  async prune(options: PruneOptions): Promise<{ deleted: number }> {
    this.#requireStarted("prune");
    const parsed = PruneOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ConfigError(`Invalid prune options: ${describeIssues(parsed.error.issues)}`);
    }
    return { deleted: await this.backend.pruneRuns(parsed.data.finishedBefore) };
  }

  /**
   * Stops taking jobs, lets active ones finish until `timeoutMs`, then closes the backend.
   * Runs are not cancelled: with Redis, another worker recovers what was left unfinished.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.#state === "closed") return;
    this.#state = "closed";
    await this.backend.close({ timeoutMs: options.timeoutMs ?? 10_000 });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #decide(
    runId: string,
    toolCallId: string,
    decision: "allow" | "deny",
    options: DecisionOptions,
  ): Promise<void> {
    this.#requireStarted(decision === "allow" ? "approve" : "deny");
    const agent = await recordDecision(this.backend, {
      runId,
      toolCallId,
      decision,
      options,
      id: this.#deps.generateId(),
      now: this.#deps.clock.now(),
    });
    await this.backend.enqueueStep(runId, { agent });
  }

  #requireStarted(action: string): void {
    if (this.#state !== "started") {
      throw new RuntimeStateError(
        `AgentRuntime.${action}() needs a started runtime (it is ${this.#state}): call start() first.`,
      );
    }
  }
}
