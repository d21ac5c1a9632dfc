import { createHash, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Queue, Worker } from "bullmq";
import { type Logger, pino } from "pino";
import { z } from "zod";
import { ConfigError, loggableError } from "../core/errors.js";
import { recordById } from "../core/id-record.js";
import { ToolResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import type { ExtensionStateStore } from "../extensions/state-store.js";
import type {
  BackendQueue,
  BackendStartOptions,
  CloseOptions,
  EnqueueStepOptions,
  LeaseOutcome,
  OpenedToolCall,
  RunBackend,
  SaveOptions,
  SaveOutcome,
} from "../store/backend.js";
import { queueConcurrency } from "../store/backend.js";
import type { StoredCheckpoint } from "../store/checkpoint.js";
import { decodeCheckpoint, encodeCheckpoint } from "../store/checkpoint-codec.js";
import { BackendError, LeaseLostError } from "../store/errors.js";
import { fastThrowingParser } from "../store/fast-parse.js";
import type { ModelLimiter } from "../store/model-limiter.js";
import { decodeStored } from "../store/record-codec.js";
import type { EventPage, NumberedEvent } from "../store/run-feeds.js";
import {
  indexFor,
  legacyIndexes,
  pageOf,
  type RunPage,
  type RunQuery,
  runIndexes,
} from "../store/run-query.js";
import { callKey, contextView } from "../store/run-view.js";
import {
  isRunRecordStatus,
  isTerminal,
  type RunRecord,
  type RunRecordStatus,
  StepJob,
  StoredDecision,
  stepJob,
  ToolJob,
} from "../store/schemas.js";
import { conversationOf, joinRecord, recordDocument } from "../store/stored-record.js";
import { corruptSummary, DecisionRecord, type RunSummary, summarize } from "../store/summary.js";
import {
  decodeSummary,
  encodeSummary,
  readAnnouncement,
  readSummary,
} from "../store/summary-codec.js";
import { toolCallRun } from "../store/tool-call-view.js";
import { describeIssues } from "../tools/validate.js";
import { coalesceWrites } from "./coalesced-writes.js";
import { Cluster, Redis } from "./load-ioredis.js";
import { redisModelLimiter } from "./model-limiter.js";
import { PauseWatch } from "./model-pauses.js";
import {
  type ClusterNode,
  connectRedis,
  describeTarget,
  hasHashTag,
  mastersOf,
  type RedisClient,
  type RedisTarget,
  subscriberOf,
  workerConnectionOf,
} from "./redis-connection.js";
import { appendEvents, RedisEventReaders, readEventPage } from "./redis-events.js";
import { reportingUnavailable } from "./redis-failures.js";
import { indexFields } from "./redis-index-lua.js";
import { DECIDE, LIST_RUNS, PRUNE_RUN } from "./redis-index-scripts.js";
import {
  callField,
  callKeyOfField,
  jobIdPart,
  MAINTENANCE_QUEUE,
  RECONCILER,
  type RedisKeys,
  redisKeys,
  retainedKeys,
  STEP_QUEUE,
  TOOL_QUEUE,
} from "./redis-keys.js";
import type { QueueSettings } from "./redis-queues.js";
import { redisExtensionStateStore, redisRecorderSink } from "./redis-run-extras.js";
import {
  ACQUIRE_LEASE,
  COMMIT_RAW,
  LuaScript,
  MARK_STARTED,
  OPEN_TOOL_CALL,
  RELEASE_LEASE,
  RENEW_LEASE,
  REQUEST_CANCEL,
  SAVE_RUN,
} from "./redis-scripts.js";
import { StoreMarker, warnUnlessPersistent } from "./redis-store-marker.js";
import { findStrandedRuns } from "./redis-stranded.js";
import {
  CREATE_RUNS,
  createRunsArgs,
  inChunks,
  SUBMIT_CHUNK,
  SUBMIT_CHUNKS_IN_FLIGHT,
} from "./redis-submit.js";
import { SummaryFeed } from "./summary-feed.js";

export interface RedisBackendOptions {
  /** @defaultValue "redis://127.0.0.1:6379" (unless `cluster` is given) */
  url?: string;
  /**
   * A Redis Cluster's startup nodes, instead of `url`. Every key then lives in the one hash
   * slot the prefix's hash tag names (see `prefix`).
   */
  cluster?: ClusterNode[];
  /**
   * Namespace of every key (runs, leases, event lists and the BullMQ queues). On a Redis
   * Cluster it must contain a hash tag, such as "{hx}": the run store's scripts and BullMQ's
   * touch several keys at once, which a cluster allows only within one hash slot.
   * @defaultValue "hx" ("{hx}" on a cluster)
   */
  prefix?: string;
  /**
   * How long a crashed worker's job and run lease stay claimed before another worker recovers.
   * @defaultValue 30000
   */
  lockDurationMs?: number;
  /**
   * How often workers look for stalled jobs.
   * @defaultValue lockDurationMs
   */
  stalledIntervalMs?: number;
  /**
   * An ioredis client (or `Cluster`) to use instead of connecting to `url` or `cluster` (needs
   * `maxRetriesPerRequest: null`); not closed by the backend.
   */
  connection?: Redis | Cluster;
  /** @defaultValue 1000 */
  maxEventsPerRun?: number;
  /**
   * How long a finished run's per-run keys (raw results, decisions, in-flight markers, fencing,
   * cancel and wake-up flags, events) are kept; its record stays.
   * @defaultValue 86400000 (24 h)
   */
  retentionMs?: number;
  /**
   * How many times a job whose worker died is delivered again before it fails (BullMQ's
   * `maxStalledCount`, whose own default of 1 would recover a job from one crash only).
   * @defaultValue 3
   */
  maxStalledCount?: number;
  /**
   * The client name of this backend's connections (`CLIENT LIST`); BullMQ names its blocking
   * worker connections `<prefix>:<queue in base64>`.
   * @defaultValue "harnessx"
   */
  connectionName?: string;
  /** Completed jobs kept per queue. @defaultValue 1000 */
  keepCompletedJobs?: number;
  /** Failed jobs kept per queue. @defaultValue 5000 */
  keepFailedJobs?: number;
  /** How long `start()` waits for Redis to answer. @defaultValue 10000 */
  connectTimeoutMs?: number;
  /**
   * How long a command may wait for Redis (queued while the connection is down, or sent and
   * not answered): past it the runtime call rejects with `BackendError`, `code:
   * "backend_unavailable"`. Does not apply to a given `connection`, which keeps its own settings.
   * @defaultValue 5000
   */
  commandTimeoutMs?: number;
  /**
   * How often the run reconciler looks for stranded runs: runs left `queued` or `running` with
   * no live lease and no save for `strandedAfterMs` (their job was lost, say removed from the
   * queue by hand). It steps each one again; one reconciler job runs per prefix, on any process
   * with workers.
   * @defaultValue 60000
   */
  reconcileIntervalMs?: number;
  /** How long an unfinished run without a lease goes unsaved before it counts as stranded. @defaultValue 300000 */
  strandedAfterMs?: number;
  /**
   * This process's workers' name, shown by queue views (`CLIENT LIST`, bull-board) and stored on
   * the jobs they process.
   * @defaultValue "<hostname>-<pid>"
   */
  workerName?: string;
}

const Options = z.object({
  url: z.string().min(1).optional(),
  cluster: z
    .array(z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65_535) }))
    .min(1)
    .optional(),
  prefix: z
    .string()
    .min(1)
    .regex(/^[^:]+$/, "must not contain ':'")
    .optional(),
  lockDurationMs: z.number().int().positive().optional(),
  stalledIntervalMs: z.number().int().positive().optional(),
  connection: z.union([z.instanceof(Redis), z.instanceof(Cluster)]).optional(),
  maxEventsPerRun: z.number().int().positive().optional(),
  retentionMs: z.number().int().positive().optional(),
  maxStalledCount: z.number().int().positive().optional(),
  connectionName: z
    .string()
    .regex(/^[!-~]+$/, "must be printable ASCII without spaces")
    .optional(),
  keepCompletedJobs: z.number().int().nonnegative().optional(),
  keepFailedJobs: z.number().int().nonnegative().optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
  commandTimeoutMs: z.number().int().positive().optional(),
  reconcileIntervalMs: z.number().int().positive().optional(),
  strandedAfterMs: z.number().int().positive().optional(),
  workerName: z
    .string()
    .regex(/^[!-~]+$/, "must be printable ASCII without spaces")
    .optional(),
});

/** What a Redis Cluster asks of the options on top of each one's own shape. */
const ClusterReadyOptions = Options.superRefine((options, context) => {
  if (options.url !== undefined && options.cluster !== undefined) {
    context.addIssue({
      code: "custom",
      path: ["cluster"],
      message: "give either url or cluster, not both",
    });
  }
  const onCluster = options.cluster !== undefined || options.connection instanceof Cluster;
  if (onCluster && options.prefix !== undefined && !hasHashTag(options.prefix)) {
    context.addIssue({
      code: "custom",
      path: ["prefix"],
      message:
        'on a Redis Cluster it must contain a hash tag, such as "{hx}": every key of the ' +
        "backend (and BullMQ's) must share one hash slot",
    });
  }
});

/**
 * The distributed backend: run records, leases, decisions and run events in Redis, work on
 * BullMQ queues. Any number of processes with the same agents and prefix share the runs.
 * @example
 * const backend = redisBackend({ url: "redis://127.0.0.1:6379", prefix: "hx" });
 * const onCluster = redisBackend({ cluster: [{ host: "10.0.0.1", port: 6379 }], prefix: "{hx}" });
 */
export function redisBackend(options: RedisBackendOptions = {}): RunBackend {
  const parsed = ClusterReadyOptions.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid redisBackend options: ${describeIssues(parsed.error.issues)}`);
  }
  const backend = new RedisBackend(options);
  const timeoutMs = options.commandTimeoutMs ?? 5000;
  return reportingUnavailable<RunBackend>(
    backend,
    () => `${backend.where} did not answer within ${timeoutMs} ms (commandTimeoutMs).`,
  );
}

/**
 * In-flight marks of a call attempt: its handler started (`started:<unique id>`), or it did
 * not run and waits for a person (`interrupted:<reason>`).
 */
const STARTED = "started";
const INTERRUPTED = "interrupted:";

const parseLeaseReply = fastThrowingParser(
  z.union([
    z.tuple([z.literal(0), z.number()]),
    z.tuple([
      z.literal(1),
      z.number(),
      z.number(),
      z.string(),
      z.array(z.string()),
      z.array(z.string()),
      z.string(),
    ]),
  ]),
);

/** Run `runId`'s stored summary (JSON; "" or null when it has none), parsed. */
function storedSummary(runId: string, json: string | null | undefined): RunSummary | undefined {
  if (json == null || json === "") return undefined;
  return decodeSummary(runId, json, "A stored run summary");
}
const Replies = z.array(z.string());
/** OPEN_TOOL_CALL's reply: document, summary ("" when none), committed, cancelled. */
const parseOpenToolCallReply = fastThrowingParser(
  z.tuple([z.string(), z.string(), z.number(), z.number(), z.union([z.number(), z.string()])]),
);
/** SAVE_RUN's reply: refused (-1: lease lost, -2: conversation length), or saved. */
const parseSaveReply = fastThrowingParser(
  z.union([
    z.literal(-1),
    z.literal(-2),
    z.tuple([z.literal(1), z.number(), z.number(), z.array(z.string())]),
  ]),
);

/** Raw results as a flat field/value list from Redis, by call key. */
function rawResultsOf(runId: string, flat: readonly string[]): Record<string, ToolResult> {
  const entries: Array<[string, ToolResult]> = [];
  for (let index = 0; index + 1 < flat.length; index += 2) {
    entries.push([
      callKeyOfField(flat[index] as string),
      decodeStored(ToolResult, flat[index + 1] as string, `A raw result of run "${runId}"`),
    ]);
  }
  return recordById(entries);
}
/** How often a decision is checked again when the run's record changed meanwhile. */
const MAX_DECIDE_ATTEMPTS = 5;
/** Runs pruned per round trip. */
const PRUNE_BATCH = 100;

class RedisBackend implements RunBackend {
  readonly kind = "redis" as const;
  readonly lockDurationMs: number;
  readonly retentionMs: number;
  readonly extensionState: ExtensionStateStore;
  readonly recordings: ReturnType<typeof redisRecorderSink>;
  /** Where Redis is, for messages: "Redis at <url>" or "Redis Cluster at <nodes>". */
  readonly where: string;
  readonly #prefix: string;
  readonly #stalledIntervalMs: number;
  readonly #maxStalledCount: number;
  readonly #maxEvents: number;
  readonly #keepCompleted: number;
  readonly #keepFailed: number;
  readonly #connectTimeoutMs: number;
  readonly #workerName: string;
  readonly #keys: RedisKeys;
  readonly #ownsConnection: boolean;
  /**
   * Run-store commands: the commands of concurrent jobs share writes (coalesced; auto-pipelined
   * on a cluster).
   */
  readonly #redis: RedisClient;
  /** BullMQ's queues: a plain connection, as BullMQ expects (its writes coalesced). */
  readonly #queueRedis: RedisClient;
  /** Where the writes go that a run's next step must see (`#beforeSteps`). */
  readonly #stepRedis: RedisClient;
  /** Such writes under way on a cluster, by run: its next step's add waits for them. */
  readonly #stepWrites = new Map<string, Promise<void>>();
  /** BullMQ's workers: a connection of their own, cut at the close deadline (`close`). */
  #workerRedis: RedisClient | undefined;
  readonly #readers: RedisEventReaders;
  readonly #marker: StoreMarker;
  readonly #reconcileIntervalMs: number;
  readonly #strandedAfterMs: number;
  #logger: Logger = pino({ level: "silent" });
  #queues: { steps: Queue; tools: Queue; maintenance: Queue } | undefined;
  #workers: Worker[] = [];
  /** Hears cancel requests from every process (workers only). */
  #cancelSubscriber: RedisClient | undefined;
  /** Hears run summaries from every process (`watchRuns`), once something watches. */
  #summarySubscriber: RedisClient | undefined;
  #summarySubscription: Promise<void> | undefined;
  readonly #changes = new SummaryFeed();
  /** The summary each record was last saved with, for its job's return value. */
  readonly #summaries = new WeakMap<RunRecord, RunSummary>();
  #closed = false;
  #limiter: ModelLimiter | undefined;
  /** Model pauses, heard by the control subscriber of a process with workers. */
  readonly #pauses: PauseWatch;

  constructor(options: RedisBackendOptions) {
    const target: RedisTarget =
      options.cluster === undefined
        ? { url: options.url ?? "redis://127.0.0.1:6379" }
        : { cluster: options.cluster };
    const onCluster = "cluster" in target || options.connection instanceof Cluster;
    this.where =
      options.connection instanceof Cluster && options.cluster === undefined
        ? "the given Redis Cluster"
        : describeTarget(target);
    this.#prefix = options.prefix ?? (onCluster ? "{hx}" : "hx");
    this.lockDurationMs = options.lockDurationMs ?? 30_000;
    this.#stalledIntervalMs = options.stalledIntervalMs ?? this.lockDurationMs;
    this.#maxStalledCount = options.maxStalledCount ?? 3;
    this.retentionMs = options.retentionMs ?? 86_400_000;
    this.#maxEvents = options.maxEventsPerRun ?? 1000;
    this.#keepCompleted = options.keepCompletedJobs ?? 1000;
    this.#keepFailed = options.keepFailedJobs ?? 5000;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.#workerName = options.workerName ?? `${hostname()}-${process.pid}`;
    this.#keys = redisKeys(this.#prefix);
    this.#ownsConnection = options.connection === undefined;
    const connect = (autoPipelining: boolean): RedisClient =>
      connectRedis(target, {
        connectionName: options.connectionName ?? "harnessx",
        autoPipelining,
        commandTimeoutMs: options.commandTimeoutMs ?? 5000,
      });
    // On one Redis, both connections send what is issued together in one write
    // (`coalesceWrites`); a cluster's client auto-pipelines by node instead.
    this.#redis = options.connection ?? connect(onCluster);
    this.#queueRedis = options.connection ?? connect(false);
    if (this.#ownsConnection) {
      if (!onCluster) coalesceWrites(this.#redis);
      coalesceWrites(this.#queueRedis);
    }
    this.#stepRedis = onCluster ? this.#redis : this.#queueRedis;
    for (const redis of new Set([this.#redis, this.#queueRedis])) {
      redis.on("error", (error) => this.#logger.warn({ err: loggableError(error) }, "redis error"));
    }
    this.extensionState = redisExtensionStateStore(this.#redis, this.#keys);
    this.recordings = redisRecorderSink(this.#redis, this.#keys);
    this.#reconcileIntervalMs = options.reconcileIntervalMs ?? 60_000;
    this.#strandedAfterMs = options.strandedAfterMs ?? 300_000;
    this.#marker = new StoreMarker(this.#redis, this.#keys.store);
    this.#pauses = new PauseWatch(this.#redis, this.#keys.pauseChannel);
    // Wake-ups come by message; the poll only backs up a message lost in a way nobody saw.
    this.#readers = new RedisEventReaders(this.#redis, 30_000, () => this.#logger);
  }

  async start(options: BackendStartOptions): Promise<void> {
    this.#logger = options.logger;
    await this.#connect();
    await this.#checkEvictionPolicy();
    await warnUnlessPersistent(this.#redis, this.#logger, this.where);
    await this.#marker.open();
    // Without it, every first call would be refused (NOSCRIPT) and sent again in full.
    await LuaScript.loadAll(this.#redis).catch((error: unknown) =>
      this.#logger.debug({ err: loggableError(error) }, "could not preload the scripts"),
    );
    // BullMQ loads here, not with the package: direct runs and the embedded backend never pay
    // for it.
    const { createQueue, createWorker } = await loadQueues();
    const settings: QueueSettings = {
      connection: this.#queueRedis,
      prefix: this.#prefix,
      lockDurationMs: this.lockDurationMs,
      stalledIntervalMs: this.#stalledIntervalMs,
      maxStalledCount: this.#maxStalledCount,
      keepCompleted: this.#keepCompleted,
      keepFailed: this.#keepFailed,
    };
    this.#queues = {
      steps: createQueue(STEP_QUEUE, settings),
      tools: createQueue(TOOL_QUEUE, settings),
      maintenance: createQueue(MAINTENANCE_QUEUE, settings),
    };
    for (const queue of Object.values(this.#queues)) {
      queue.on("error", (error) =>
        this.#logger.error({ err: loggableError(error) }, "queue error"),
      );
    }
    const { processors } = options;
    if (processors === undefined) return;
    await this.#listenForControl(options.onCancel);
    const workerRedis = workerConnectionOf(this.#queueRedis);
    coalesceWrites(workerRedis);
    workerRedis.on("error", (error) =>
      this.#logger.warn({ err: loggableError(error) }, "redis error"),
    );
    this.#workerRedis = workerRedis;
    const { steps, tools } = queueConcurrency(options.concurrency);
    const workerSettings = {
      ...settings,
      connection: workerRedis,
      logger: this.#logger,
      workerName: this.#workerName,
    };
    this.#workers = [
      createWorker(
        STEP_QUEUE,
        StepJob,
        async (job: StepJob, delivery) => {
          const record = await processors.step(job, delivery);
          return this.#jobOutcome(
            job.runId,
            record && (this.#summaries.get(record) ?? summarize(record)),
          );
        },
        { ...workerSettings, concurrency: steps },
      ),
      createWorker(
        TOOL_QUEUE,
        ToolJob,
        async (job: ToolJob, delivery) =>
          this.#jobOutcome(job.runId, (await processors.tool(job, delivery))?.summary),
        { ...workerSettings, concurrency: tools },
      ),
      createWorker(MAINTENANCE_QUEUE, z.unknown(), () => this.#reconcile(), {
        ...workerSettings,
        concurrency: 1,
      }),
    ];
    // The same scheduler id from every process: one reconciler job per interval, not one each.
    await this.#queue("maintenance").upsertJobScheduler(
      RECONCILER,
      { every: this.#reconcileIntervalMs },
      { name: RECONCILER, data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
    );
    await Promise.all(this.#workers.map((worker) => worker.waitUntilReady()));
  }

  async close(options: CloseOptions): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#workers.length > 0) {
      const { closeWorkers } = await loadQueues();
      if (!(await closeWorkers(this.#workers, options.timeoutMs))) {
        this.#abandonJobs();
        options.onDeadline?.();
      }
      this.#workerRedis?.disconnect();
    }
    this.#readers.close();
    this.#cancelSubscriber?.disconnect();
    this.#summarySubscriber?.disconnect();
    await Promise.all(Object.values(this.#queues ?? {}).map((queue) => queue.close()));
    if (this.#ownsConnection) {
      await Promise.all(
        [this.#redis, this.#queueRedis].map((redis) =>
          redis.quit().catch(() => redis.disconnect()),
        ),
      );
    }
  }

  async createRun(record: RunRecord): Promise<boolean> {
    const [created] = z
      .array(z.number())
      .parse(await CREATE_RUNS.run(this.#redis, ...createRunsArgs(this.#keys, [record])));
    return created === 1;
  }

  async submitRun(record: RunRecord, options: EnqueueStepOptions = {}): Promise<boolean> {
    if (!this.#stepsFollowWrites) {
      if (!(await this.createRun(record))) return false;
      await this.enqueueStep(record.runId, options);
      return true;
    }
    // The record goes on the queue connection, sent before the step's add is: Redis runs one
    // connection's commands in order, so the step finds its run, and neither waits for the
    // other's reply. Should Redis not know the script (it is sent again, behind the add), the
    // step may have come too early and been dropped (a step of no run does nothing): one more
    // is queued once the run is stored.
    let resent = false;
    const [creating, adding] = await Promise.allSettled([
      CREATE_RUNS.run(this.#queueRedis, ...createRunsArgs(this.#keys, [record]), () => {
        resent = true;
      }),
      this.enqueueStep(record.runId, options),
    ]);
    if (creating.status === "rejected") throw creating.reason;
    const [created] = z.array(z.number()).parse(creating.value);
    if (adding.status === "rejected") throw adding.reason;
    if (created === 1 && resent) await this.enqueueStep(record.runId, options);
    return created === 1;
  }

  async submitRuns(
    records: readonly RunRecord[],
    options: EnqueueStepOptions = {},
  ): Promise<string[]> {
    const existing = await inChunks(
      records,
      SUBMIT_CHUNK,
      SUBMIT_CHUNKS_IN_FLIGHT,
      async (chunk) => {
        const replies = z
          .array(z.number())
          .parse(await CREATE_RUNS.run(this.#redis, ...createRunsArgs(this.#keys, chunk)));
        const created = chunk.filter((_, at) => replies[at] === 1);
        // Added once the chunk's records are stored: a step never comes before its run.
        if (created.length > 0) {
          await this.#queue("steps").addBulk(
            created.map((record) => this.#firstStepJob(record, options)),
          );
        }
        return chunk.filter((_, at) => replies[at] !== 1).map((record) => record.runId);
      },
    );
    return existing.flat();
  }

  /** A new run's first step job, for `addBulk`. */
  #firstStepJob(record: RunRecord, options: EnqueueStepOptions) {
    const priority = record.priority === undefined ? {} : { priority: record.priority };
    const data: StepJob = { ...stepJob(record.runId, undefined, priority), agent: record.agent };
    return {
      name: stepJobName(data),
      data,
      opts: this.#stepJobOptions(record.runId, { ...options, ...priority }),
    };
  }

  async loadRun(runId: string): Promise<RunRecord | undefined> {
    // Issued together: the connection sends them in one write.
    const [[document, summary], messages] = await Promise.all([
      this.#redis.hmget(this.#keys.run(runId), "record", "summary"),
      this.#redis.lrange(this.#keys.messages(runId), 0, -1),
    ]);
    if (document != null) return joinRecord(document, messages, storedSummary(runId, summary));
    await this.#marker.assertKept(this.where);
    return undefined;
  }

  async openToolCall(
    runId: string,
    iteration: number,
    toolCallId: string,
    markStarted?: string,
  ): Promise<OpenedToolCall> {
    // Unique per call: a reply lost and re-sent by ioredis finds our own mark.
    const mark = markStarted === undefined ? "" : `${STARTED}:${randomUUID()}`;
    const [document, summary, committed, cancelled, started] = parseOpenToolCallReply(
      await OPEN_TOOL_CALL.run(
        this.#redis,
        [
          this.#keys.run(runId),
          this.#keys.raw(runId, iteration),
          this.#keys.cancel(runId),
          this.#keys.inFlight(runId, iteration),
        ],
        [callField(toolCallId), markStarted === undefined ? "" : callField(markStarted), mark],
      ),
    );
    if (document === "") await this.#marker.assertKept(this.where);
    return {
      run:
        document === ""
          ? undefined
          : toolCallRun(document, storedSummary(runId, summary), toolCallId),
      committed: committed === 1,
      cancelRequested: cancelled === 1,
      ...(started === "" ? {} : { started: started === 1 || started === mark }),
    };
  }

  async runStatus(runId: string): Promise<RunRecordStatus | undefined> {
    const status = await this.#redis.hget(this.#keys.run(runId), "status");
    return status !== null && isRunRecordStatus(status) ? status : undefined;
  }

  async listRuns(query: RunQuery): Promise<RunPage> {
    const { indexes, filter } = indexFor(query);
    const indexKeys = indexes.map(this.#keys.index);
    const { after } = query;
    const reply = await LIST_RUNS.run(this.#redis, indexKeys, [
      query.limit,
      after === undefined ? "" : String(after.createdAt),
      after?.runId ?? "",
      this.#keys.runPrefix,
      filter.status ?? "",
      filter.agent ?? "",
    ]);
    const flat = Replies.parse(reply);
    const summaries: RunSummary[] = [];
    for (let at = 0; at + 2 < flat.length; at += 3) {
      const [runId, json, status] = flat.slice(at, at + 3) as [string, string, string];
      try {
        summaries.push(decodeSummary(runId, json));
      } catch (error) {
        // One bad record never hides the others: it is listed, marked, and logged.
        const scores = await Promise.all(indexKeys.map((key) => this.#redis.zscore(key, runId)));
        const createdAt = Number(scores.find((score) => score !== null));
        this.#logger.warn({ err: loggableError(error), runId }, "a stored run is corrupt");
        summaries.push(corruptSummary(runId, status, createdAt, error));
      }
    }
    if (summaries.length === 0) await this.#marker.assertKept(this.where);
    return pageOf(summaries, query.limit);
  }

  async auditTrail(runId: string): Promise<DecisionRecord[]> {
    const entries = await this.#redis.lrange(this.#keys.audit(runId), 0, -1);
    return entries.map((json) =>
      decodeStored(DecisionRecord, json, `An audit entry of run "${runId}"`),
    );
  }

  async checkpoints(runId: string): Promise<StoredCheckpoint[]> {
    const entries = await this.#redis.lrange(this.#keys.checkpoints(runId), 0, -1);
    return entries.map((json) => decodeCheckpoint(json, `A checkpoint of run "${runId}"`));
  }

  async pruneRuns(finishedBefore: number): Promise<number> {
    let pruned = 0;
    for (;;) {
      const runIds = await this.#redis.zrangebyscore(
        this.#keys.finished,
        "-inf",
        `(${finishedBefore}`,
        "LIMIT",
        0,
        PRUNE_BATCH,
      );
      if (runIds.length === 0) return pruned;
      const summaries = await Promise.all(
        runIds.map((runId) => this.#redis.hget(this.#keys.run(runId), "summary")),
      );
      const outcomes = await Promise.all(
        runIds.map((runId, at) => this.#pruneRun(runId, summaries[at] ?? null)),
      );
      pruned += outcomes.filter(Boolean).length;
    }
  }

  /** Deletes one finished run, given its stored summary (null when it has none). */
  async #pruneRun(runId: string, json: string | null): Promise<boolean> {
    const summary = json === null ? undefined : decodeSummary(runId, json);
    const indexes =
      summary === undefined
        ? []
        : [...runIndexes(summary), ...legacyIndexes(summary)].map(this.#keys.index);
    const others = [
      this.#keys.audit(runId),
      this.#keys.messages(runId),
      this.#keys.checkpoints(runId),
      this.#keys.events(runId),
      this.#keys.recording(runId),
      this.#keys.lease(runId),
      ...retainedKeys(this.#keys, runId, summary?.iterations ?? 0),
    ];
    const reply = await PRUNE_RUN.run(
      this.#redis,
      [this.#keys.run(runId), this.#keys.finished, ...indexes, ...others],
      [runId, indexes.length],
    );
    return reply === 1;
  }

  async acquireLease(runId: string): Promise<LeaseOutcome> {
    const reply = parseLeaseReply(
      await ACQUIRE_LEASE.run(
        this.#redis,
        [
          this.#keys.lease(runId),
          this.#keys.wake(runId),
          this.#keys.run(runId),
          this.#keys.cancel(runId),
          this.#keys.messages(runId),
        ],
        [this.lockDurationMs, this.#keys.indexPrefix, runId, this.#keys.runsChannel],
      ),
    );
    if (reply[0] === 0) return { acquired: false, remainingMs: Math.max(0, reply[1]) };
    const [, token, cancelled, document, flatRaw, messages, summary] = reply;
    if (document === "") await this.#marker.assertKept(this.where);
    const record =
      document === "" ? undefined : joinRecord(document, messages, storedSummary(runId, summary));
    const iteration = record?.phase === "dispatch" ? contextView(record)?.iteration : undefined;
    const results = rawResultsOf(runId, flatRaw);
    return {
      acquired: true,
      token,
      opened: {
        record,
        cancelRequested: cancelled === 1,
        ...(iteration === undefined ? {} : { raw: { iteration, results } }),
      },
    };
  }

  async renewLease(runId: string, token: number): Promise<boolean> {
    const renewed = await RENEW_LEASE.run(
      this.#redis,
      [this.#keys.lease(runId)],
      [token, this.lockDurationMs],
    );
    return renewed === 1;
  }

  async saveRun(
    runId: string,
    token: number,
    record: RunRecord,
    events: readonly RunEvent[] = [],
    storedMessages?: number,
    options: SaveOptions = {},
  ): Promise<SaveOutcome> {
    const finished = isTerminal(record.status);
    const summary = summarize(record);
    const summaryJson = encodeSummary(summary);
    const newMessages = conversationOf(record)
      .slice(storedMessages ?? 0)
      .map((message) => JSON.stringify(message));
    const atDispatch = record.phase === "dispatch";
    const { thenTools = [] } = options;
    // Every save goes where the adds of the jobs a run's saves queue go (`#beforeSteps`): on
    // one Redis, on their connection, so that they follow every save of the run issued before.
    const saving = this.#beforeSteps(
      runId,
      SAVE_RUN.run(
        this.#stepRedis,
        [
          this.#keys.run(runId),
          this.#keys.cancel(runId),
          this.#keys.lease(runId),
          this.#keys.events(runId),
          this.#keys.messages(runId),
          this.#keys.wake(runId),
          this.#keys.checkpoints(runId),
          ...(finished ? retainedKeys(this.#keys, runId, record.result?.iterations ?? 0) : []),
        ],
        [
          token,
          recordDocument(record, summary),
          record.status,
          summaryJson,
          this.lockDurationMs,
          this.#keys.indexPrefix,
          finished ? this.retentionMs : "",
          this.#maxEvents,
          atDispatch ? this.#keys.raw(runId, contextView(record)?.iteration ?? 0) : "",
          storedMessages ?? "",
          this.#keys.runsChannel,
          options.release === true ? "1" : "",
          newMessages.length,
          options.checkpoint === undefined ? "" : encodeCheckpoint(options.checkpoint),
          JSON.stringify(runId),
          ...indexFields(summary),
          ...newMessages,
          ...events.map((event) => JSON.stringify(event)),
        ],
      ),
    );
    const [saved] = await Promise.all([saving, ...thenTools.map((job) => this.enqueueTool(job))]);
    const reply = parseSaveReply(saved);
    if (reply === -1) throw new LeaseLostError(runId, token);
    if (reply === -2) {
      throw new BackendError(
        `Run "${runId}" does not have ${storedMessages ?? 0} stored messages: refusing a save that would misplace the conversation.`,
      );
    }
    this.#summaries.set(record, summary);
    const [, cancelled, woken, flatRaw] = reply;
    return {
      cancelRequested: cancelled === 1,
      ...(options.release === true ? { released: { wake: woken === 1 } } : {}),
      ...(atDispatch ? { raw: rawResultsOf(runId, flatRaw) } : {}),
    };
  }

  async releaseLease(runId: string, token: number): Promise<{ wake: boolean }> {
    const woken = await RELEASE_LEASE.run(
      this.#redis,
      [this.#keys.lease(runId), this.#keys.wake(runId)],
      [token],
    );
    return { wake: woken === 1 };
  }

  async commitRaw(
    runId: string,
    iteration: number,
    result: ToolResult,
    events: readonly RunEvent[] = [],
  ): Promise<boolean> {
    const won = await this.#beforeSteps(
      runId,
      COMMIT_RAW.run(
        this.#stepRedis,
        [this.#keys.raw(runId, iteration), this.#keys.events(runId), this.#keys.run(runId)],
        [
          callField(result.toolCallId),
          JSON.stringify(result),
          this.#maxEvents,
          ...events.map((event) => JSON.stringify(event)),
        ],
      ),
    );
    return won === 1;
  }

  async rawResults(runId: string, iteration: number): Promise<Record<string, ToolResult>> {
    const stored = await this.#redis.hgetall(this.#keys.raw(runId, iteration));
    return Object.fromEntries(
      Object.entries(stored).map(([field, json]) => [
        callKeyOfField(field),
        decodeStored(ToolResult, json, `A raw result of run "${runId}"`),
      ]),
    );
  }

  async markCallStarted(
    runId: string,
    iteration: number,
    callKey: string,
    events: readonly RunEvent[] = [],
  ): Promise<boolean> {
    // Unique per call: a reply lost and re-sent by ioredis finds our own mark.
    const mark = `${STARTED}:${randomUUID()}`;
    const reply = await MARK_STARTED.run(
      this.#redis,
      [this.#keys.inFlight(runId, iteration), this.#keys.events(runId), this.#keys.run(runId)],
      [callField(callKey), mark, this.#maxEvents, ...events.map((event) => JSON.stringify(event))],
    );
    return reply === 1 || reply === mark;
  }

  async markCallInterrupted(
    runId: string,
    iteration: number,
    callKey: string,
    reason: string,
  ): Promise<void> {
    await this.#beforeSteps(
      runId,
      this.#stepRedis.hset(
        this.#keys.inFlight(runId, iteration),
        callField(callKey),
        `${INTERRUPTED}${reason}`,
      ),
    );
  }

  /**
   * True when a step job added after a write on `#stepRedis` is sent is applied after that
   * write: both go on one connection (one Redis, not a cluster).
   */
  get #stepsFollowWrites(): boolean {
    return this.#stepRedis === this.#queueRedis && !(this.#redis instanceof Cluster);
  }

  /**
   * A write that the run's next jobs must see (`saveRun`, `commitRaw`, `markCallInterrupted`):
   * a job queued after it is issued is added after it is applied. On one Redis it goes on the
   * queue connection, ahead of the add; on a cluster the add waits for it and for the run's
   * writes before it.
   */
  #beforeSteps<T>(runId: string, write: Promise<T>): Promise<T> {
    if (this.#stepsFollowWrites) return write;
    const ignore = () => undefined;
    const earlier = this.#stepWrites.get(runId);
    const settled = Promise.all([earlier, write]).then(ignore, ignore);
    this.#stepWrites.set(runId, settled);
    void settled.then(() => {
      if (this.#stepWrites.get(runId) === settled) this.#stepWrites.delete(runId);
    });
    return write;
  }

  async interruptedCalls(runId: string, iteration: number): Promise<Map<string, string>> {
    const marks = await this.#redis.hgetall(this.#keys.inFlight(runId, iteration));
    const waiting = new Map<string, string>();
    for (const [key, mark] of Object.entries(marks)) {
      if (mark.startsWith(INTERRUPTED)) {
        waiting.set(callKeyOfField(key), mark.slice(INTERRUPTED.length));
      }
    }
    return waiting;
  }

  async decide(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    check?: (record: RunRecord | undefined) => void,
  ): Promise<boolean> {
    let reply: unknown;
    for (let attempt = 1; ; attempt++) {
      let checked = "";
      if (check !== undefined) {
        const [[document, summary], messages] = await Promise.all([
          this.#redis.hmget(this.#keys.run(runId), "record", "summary"),
          this.#redis.lrange(this.#keys.messages(runId), 0, -1),
        ]);
        check(
          document == null
            ? undefined
            : joinRecord(document, messages, storedSummary(runId, summary)),
        );
        checked = createHash("sha1")
          .update(document ?? "")
          .digest("hex");
      }
      // The script writes only while the record is still the one checked.
      reply = await DECIDE.run(
        this.#redis,
        [this.#keys.decisions(runId, iteration), this.#keys.audit(runId), this.#keys.run(runId)],
        [callField(callKey), JSON.stringify(decision), JSON.stringify(audit), checked],
      );
      if (reply !== -1) break;
      if (attempt === MAX_DECIDE_ATTEMPTS) {
        throw new BackendError(
          `Run "${runId}" kept changing while a decision on it was recorded; nothing was recorded.`,
        );
      }
    }
    if (reply === 1) return true;
    // A reply lost and re-sent by ioredis answers with our own write: compare the stored id.
    const stored = z.string().parse(reply);
    return decodeStored(StoredDecision, stored, `A decision of run "${runId}"`).id === decision.id;
  }

  async decisions(runId: string, iteration: number): Promise<Record<string, StoredDecision>> {
    const stored = await this.#redis.hgetall(this.#keys.decisions(runId, iteration));
    return Object.fromEntries(
      Object.entries(stored).map(([field, json]) => [
        callKeyOfField(field),
        decodeStored(StoredDecision, json, `A decision of run "${runId}"`),
      ]),
    );
  }

  async requestCancel(runId: string): Promise<void> {
    await REQUEST_CANCEL.run(
      this.#redis,
      [this.#keys.cancel(runId), this.#keys.run(runId)],
      [this.retentionMs, this.#keys.cancelChannel, runId],
    );
  }

  async cancelRequested(runId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.cancel(runId))) === 1;
  }

  get publishesInOrder(): boolean {
    return this.#stepsFollowWrites;
  }

  async publish(runId: string, events: RunEvent | readonly RunEvent[]): Promise<void> {
    const keys = { events: this.#keys.events(runId), run: this.#keys.run(runId) };
    const list = Array.isArray(events) ? (events as readonly RunEvent[]) : [events as RunEvent];
    // On one Redis, on the saves' connection: a save issued after an append is applied after it.
    await appendEvents(this.#stepRedis, keys, list, { maxLength: this.#maxEvents });
  }

  async *events(runId: string, options: { live?: boolean } = {}): AsyncGenerator<RunEvent> {
    const keys = { events: this.#keys.events(runId), run: this.#keys.run(runId) };
    // A finished run without a log (none was ever written) has only its final result.
    const finalEvent = async (): Promise<RunEvent | undefined> => {
      const record = await this.loadRun(runId);
      return record !== undefined && isTerminal(record.status) && record.result !== null
        ? { type: "result", result: record.result }
        : undefined;
    };
    yield* this.#readers.read(keys, finalEvent, { subscribeFirst: options.live === true });
  }

  followEvents(runId: string, after: number): AsyncIterable<NumberedEvent> {
    const keys = { events: this.#keys.events(runId), run: this.#keys.run(runId) };
    return this.#readers.readFrom(keys, after, () => this.#finalEvent(runId));
  }

  async readEvents(runId: string, after: number, limit: number): Promise<EventPage> {
    const keys = { events: this.#keys.events(runId), run: this.#keys.run(runId) };
    return readEventPage(this.#redis, keys, after, limit, () => this.#finalEvent(runId));
  }

  async watchRuns(signal: AbortSignal): Promise<AsyncIterable<RunSummary>> {
    const changes = this.#changes.listen(signal);
    this.#summarySubscription ??= this.#subscribeToSummaries().catch((error: unknown) => {
      this.#summarySubscription = undefined;
      throw error;
    });
    await this.#summarySubscription;
    return changes;
  }

  /** The final result of a finished run that has no event log (none was ever written). */
  async #finalEvent(runId: string): Promise<RunEvent | undefined> {
    const record = await this.loadRun(runId);
    return record !== undefined && isTerminal(record.status) && record.result !== null
      ? { type: "result", result: record.result }
      : undefined;
  }

  /** One subscriber per backend feeds every `watchRuns` listener of this process. */
  async #subscribeToSummaries(): Promise<void> {
    const subscriber = subscriberOf(this.#redis);
    subscriber.on("error", (error) =>
      this.#logger.warn({ err: loggableError(error) }, "runs subscriber error"),
    );
    subscriber.on("message", (_channel: string, json: string) => {
      const summary = readAnnouncement(json);
      if (summary !== undefined) this.#changes.emit(summary);
      else this.#logger.warn({ channel: this.#keys.runsChannel }, "skipped a malformed summary");
    });
    this.#summarySubscriber = subscriber;
    await subscriber.connect();
    await subscriber.subscribe(this.#keys.runsChannel);
  }

  async enqueueStep(runId: string, options: EnqueueStepOptions = {}): Promise<void> {
    await this.#stepWrites.get(runId);
    const { giveUp, agent, ...extra } = options;
    const data: StepJob = {
      ...stepJob(runId, giveUp, extra),
      ...(agent === undefined ? {} : { agent }),
    };
    await this.#queue("steps").add(stepJobName(data), data, this.#stepJobOptions(runId, options));
  }

  #stepJobOptions(runId: string, options: EnqueueStepOptions) {
    return {
      jobId:
        options.jobId === undefined
          ? `step-${jobIdPart(runId)}-${randomUUID()}`
          : jobIdPart(options.jobId),
      ...(options.delayMs === undefined || options.delayMs <= 0 ? {} : { delay: options.delayMs }),
      ...(options.priority === undefined ? {} : { priority: options.priority }),
    };
  }

  async enqueueTool(job: ToolJob): Promise<void> {
    await this.#stepWrites.get(job.runId);
    // One id per call attempt: while a job for it exists, BullMQ ignores the add. The parts
    // are joined by "|", which jobIdPart always escapes, so two attempts never share an id.
    const key = callKey({ call: { id: job.toolCallId }, interruptions: job.attempt });
    await this.#queue("tools").add(toolJobName(job), job, {
      jobId: `tool|${jobIdPart(job.runId)}|${job.iteration}|${jobIdPart(key)}`,
      ...(job.priority === undefined ? {} : { priority: job.priority }),
    });
  }

  modelLimiter(): ModelLimiter {
    this.#limiter ??= redisModelLimiter(this.#redis, this.#prefix, this.#pauses);
    return this.#limiter;
  }

  queues(): BackendQueue[] {
    if (this.#queues === undefined) return [];
    return [
      { role: "steps", prefix: this.#prefix, queue: this.#queues.steps },
      { role: "tools", prefix: this.#prefix, queue: this.#queues.tools },
    ];
  }

  /**
   * A job's return value: where its run stands after it (a queue view shows it per job), from
   * the summary of the run as the processor left it, else read from the run's stored summary.
   */
  async #jobOutcome(runId: string, known: RunSummary | undefined): Promise<JobOutcome> {
    let summary = known;
    if (summary === undefined) {
      const json = await this.#redis.hget(this.#keys.run(runId), "summary");
      summary = json === null ? undefined : readSummary(runId, json);
      if (summary === undefined) return { runId, run: "unknown" };
    }
    return {
      runId,
      agent: summary.agent,
      run: summary.status,
      phase: summary.phase,
      iterations: summary.iterations,
      ...(summary.pending.length === 0
        ? {}
        : { waitingFor: summary.pending.map((call) => call.name) }),
      ...(summary.error === null ? {} : { error: summary.error.code }),
    };
  }

  /**
   * At the close deadline, jobs still running are left for another worker: their connections
   * are cut, so their locks are no longer renewed (they expire, and another worker's stalled
   * check delivers the jobs again) and nothing they do later reaches Redis. The run store's
   * connection is cut too when it is ours; run leases stop being renewed either way.
   */
  #abandonJobs(): void {
    // Not awaited: a connection that is reconnecting may never report its end.
    for (const worker of this.#workers) worker.disconnect().catch(() => {});
    this.#workerRedis?.disconnect();
    if (this.#ownsConnection)
      for (const redis of [this.#redis, this.#queueRedis]) redis.disconnect();
  }

  /**
   * Subscribes to the cancel channel, so that a request from any process reaches this one's
   * jobs, and to the model-pause channel (`PauseWatch`), on one connection.
   */
  async #listenForControl(onCancel: ((runId: string) => void) | undefined): Promise<void> {
    const subscriber = subscriberOf(this.#redis);
    subscriber.on("error", (error) =>
      this.#logger.warn({ err: loggableError(error) }, "cancel subscriber error"),
    );
    const { cancelChannel, pauseChannel } = this.#keys;
    subscriber.on("message", (channel: string, message: string) => {
      if (channel === pauseChannel) this.#pauses.heard(message);
      else if (channel === cancelChannel) onCancel?.(message);
    });
    // Pauses announced while the connection was down are missed: they are read again.
    subscriber.on("close", () => this.#pauses.listening(false));
    subscriber.on("ready", () => {
      if (this.#cancelSubscriber === subscriber && !this.#closed) this.#pauses.listening(true);
    });
    this.#cancelSubscriber = subscriber;
    await subscriber.connect();
    await subscriber.subscribe(cancelChannel, pauseChannel);
    this.#pauses.listening(true);
  }

  /**
   * Steps every stranded run again (`findStrandedRuns`). Idempotent: the job id names the run
   * and its last save, so reconcilers in several processes, or passes that find the same run
   * unchanged, queue one step.
   */
  async #reconcile(): Promise<void> {
    const stranded = await findStrandedRuns(this.#redis, this.#keys, {
      now: Date.now(),
      idleMs: this.#strandedAfterMs,
      limit: 1000,
    });
    for (const run of stranded) {
      this.#logger.warn({ runId: run.runId, status: run.status }, "stepping a stranded run again");
      await this.#queue("steps").add("step", stepJob(run.runId), {
        jobId: `step-${jobIdPart(run.runId)}-reconcile-${run.updatedAt}`,
      });
    }
  }

  #queue(name: "steps" | "tools" | "maintenance"): Queue {
    if (this.#queues === undefined) {
      throw new BackendError("The Redis backend is not started: call runtime.start() first.");
    }
    return this.#queues[name];
  }

  async #connect(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${this.#connectTimeoutMs} ms`)),
        this.#connectTimeoutMs,
      );
    });
    const connections = [...new Set([this.#redis, this.#queueRedis])];
    try {
      await Promise.race([
        Promise.all(
          connections.map(async (redis) => {
            if (redis.status === "wait") await redis.connect();
            await redis.ping();
          }),
        ),
        timeout,
      ]);
    } catch (error) {
      if (this.#ownsConnection) for (const redis of connections) redis.disconnect();
      const reason = error instanceof Error ? error.message : String(error);
      throw new BackendError(`Cannot reach ${this.where}: ${reason}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every server that holds data (each master of a cluster) must keep it: 'noeviction'. */
  async #checkEvictionPolicy(): Promise<void> {
    const onCluster = this.#redis instanceof Cluster;
    for (const server of mastersOf(this.#redis)) {
      let policy: string | undefined;
      try {
        const reply = z.array(z.string()).parse(await server.config("GET", "maxmemory-policy"));
        policy = reply[1];
      } catch (error) {
        throw new BackendError(
          "Cannot read Redis's maxmemory-policy (CONFIG GET); harnessx needs 'noeviction' and must be able to check it.",
          { cause: error },
        );
      }
      if (policy !== "noeviction") {
        const where = onCluster
          ? `Redis Cluster node ${server.options.host ?? "?"}:${server.options.port ?? "?"}`
          : this.where;
        throw new BackendError(
          `${where} has maxmemory-policy '${policy ?? "unknown"}': it may evict run records and queue keys. Set 'maxmemory-policy noeviction'.`,
        );
      }
    }
  }
}

const loadQueues = () => import("./redis-queues.js");

/** A step job's name on a queue view: its agent, and whether it gives the run up. */
const stepJobName = (job: StepJob): string =>
  `${job.agent ?? "run"} step${job.giveUp === undefined ? "" : " (give up)"}`;

/** A tool job's name on a queue view: agent, tool and call (never its input). */
const toolJobName = (job: ToolJob): string =>
  `${job.agent ?? "run"} ${job.tool ?? "tool"} ${job.toolCallId}`;

/** A harnessx job's return value: the run it worked on, as the job left it. */
interface JobOutcome {
  runId: string;
  agent?: string;
  /** The run's status after the job ("unknown" when the run is gone). */
  run: string;
  phase?: string;
  iterations?: number;
  /** The tools whose calls wait for a person. */
  waitingFor?: string[];
  /** The run's error code, when it failed. */
  error?: string;
}
