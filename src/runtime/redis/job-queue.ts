import type { Queue, Worker } from "bullmq";
import { z } from "zod";
import { loggableError } from "../../core/errors.js";
import { randomUUID } from "../../core/node-crypto.js";
import { ApprovalNoticeJob } from "../../store/approval-request.js";
import type { BackendStartOptions, CloseOptions } from "../../store/backend.js";
import {
  type EnqueueStepOptions,
  type JobProcessors,
  type JobQueue,
  type NoticeRetry,
  type QueueConcurrency,
  queueConcurrency,
} from "../../store/job-queue.js";
import type { ModelLimiter } from "../../store/model-limiter.js";
import { readSummary } from "../../store/record/summary-codec.js";
import { callKey } from "../../store/run-view.js";
import { type RunRecord, StepJob, stepJob, ToolJob } from "../../store/schemas.js";
import { type RunSummary, summarize } from "../../store/summary.js";
import type { BackendQueue } from "../backend-queue.js";
import { coalesceWrites } from "../coalesced-writes.js";
import { redisModelLimiter } from "../model-limiter.js";
import { type RedisClient, subscriberOf, workerConnectionOf } from "../redis-connection.js";
import { findDecidedStepless } from "../redis-decided-stepless.js";
import {
  jobIdPart,
  MAINTENANCE_QUEUE,
  NOTICE_QUEUE,
  RECONCILER,
  STEP_QUEUE,
  TOOL_QUEUE,
} from "../redis-keys.js";
import type { QueueSettings } from "../redis-queues.js";
import { findStrandedRuns } from "../redis-stranded.js";
import {
  CREATE_RUNS,
  createRunsArgs,
  inChunks,
  SUBMIT_CHUNK,
  SUBMIT_CHUNKS_IN_FLIGHT,
} from "../redis-submit.js";
import type { RedisContext } from "./context.js";

const loadQueues = () => import("../redis-queues.js");

/** The queue settings that come from the backend's options. */
export interface RedisQueueOptions {
  stalledIntervalMs: number;
  maxStalledCount: number;
  keepCompleted: number;
  keepFailed: number;
  workerName: string;
  reconcileIntervalMs: number;
  strandedAfterMs: number;
}

/**
 * The job queue on BullMQ: step, tool and maintenance queues under the prefix, this process's
 * workers, the control subscriber (cancels, model pauses) and the reconciler of stranded runs.
 */
export class RedisJobQueue implements JobQueue {
  readonly #context: RedisContext;
  readonly #options: RedisQueueOptions;
  readonly #createRun: (record: RunRecord) => Promise<boolean>;
  #workers: Worker[] = [];
  /** Approval notices (`enqueueNotice`): their own queue, worked where `processors.notice` is. */
  #notices: Queue | undefined;
  /** BullMQ's workers: a connection of their own, cut at the close deadline (`close`). */
  #workerRedis: RedisClient | undefined;
  /** Hears cancel requests from every process (workers only). */
  #cancelSubscriber: RedisClient | undefined;
  #limiter: ModelLimiter | undefined;

  constructor(
    context: RedisContext,
    options: RedisQueueOptions,
    createRun: (record: RunRecord) => Promise<boolean>,
  ) {
    this.#context = context;
    this.#options = options;
    this.#createRun = createRun;
  }

  /** Opens the queues and, with `processors`, starts this process's workers and reconciler. */
  async start(options: BackendStartOptions): Promise<void> {
    const context = this.#context;
    // BullMQ loads here, not with the package: direct runs and the embedded backend never pay
    // for it.
    const { createQueue, createWorker } = await loadQueues();
    const settings: QueueSettings = {
      connection: context.queueRedis,
      prefix: context.prefix,
      lockDurationMs: context.lockDurationMs,
      stalledIntervalMs: this.#options.stalledIntervalMs,
      maxStalledCount: this.#options.maxStalledCount,
      keepCompleted: this.#options.keepCompleted,
      keepFailed: this.#options.keepFailed,
    };
    context.queues = {
      steps: createQueue(STEP_QUEUE, settings),
      tools: createQueue(TOOL_QUEUE, settings),
      maintenance: createQueue(MAINTENANCE_QUEUE, settings),
    };
    this.#notices = createQueue(NOTICE_QUEUE, settings);
    for (const queue of [...Object.values(context.queues), this.#notices]) {
      queue.on("error", (error: Error) =>
        context.logger.error({ err: loggableError(error) }, "queue error"),
      );
    }
    const { processors } = options;
    if (processors === undefined) return;
    await this.#listenForControl(options.onCancel);
    const workerRedis = workerConnectionOf(context.queueRedis);
    coalesceWrites(workerRedis);
    workerRedis.on("error", (error) =>
      context.logger.warn({ err: loggableError(error) }, "redis error"),
    );
    this.#workerRedis = workerRedis;
    const workerSettings = {
      ...settings,
      connection: workerRedis,
      logger: context.logger,
      workerName: this.#options.workerName,
    };
    this.#workers = this.#createWorkers(
      createWorker,
      workerSettings,
      processors,
      queueConcurrency(options.concurrency),
    );
    // The same scheduler id from every process: one reconciler job per interval, not one each.
    await context
      .queue("maintenance")
      .upsertJobScheduler(
        RECONCILER,
        { every: this.#options.reconcileIntervalMs },
        { name: RECONCILER, data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
      );
    await Promise.all(this.#workers.map((worker) => worker.waitUntilReady()));
  }

  #createWorkers(
    createWorker: Awaited<ReturnType<typeof loadQueues>>["createWorker"],
    settings: Omit<
      Parameters<Awaited<ReturnType<typeof loadQueues>>["createWorker"]>[3],
      "concurrency"
    >,
    processors: JobProcessors,
    { steps, tools }: QueueConcurrency,
  ): Worker[] {
    const context = this.#context;
    const notice = processors.notice?.bind(processors);
    const notices =
      notice === undefined
        ? []
        : // A notice waits on its webhook, not on CPU: a few at once per process.
          [createWorker(NOTICE_QUEUE, ApprovalNoticeJob, notice, { ...settings, concurrency: 16 })];
    return [
      ...notices,
      createWorker(
        STEP_QUEUE,
        StepJob,
        // No async functions here: a job in flight keeps every suspended frame on its way.
        (job: StepJob, delivery) =>
          processors
            .step(job, delivery)
            .then((record) =>
              this.#jobOutcome(
                job.runId,
                record && (context.summaries.get(record) ?? summarize(record)),
              ),
            ),
        { ...settings, concurrency: steps },
      ),
      createWorker(
        TOOL_QUEUE,
        ToolJob,
        (job: ToolJob, delivery) =>
          processors.tool(job, delivery).then((done) => this.#jobOutcome(job.runId, done?.summary)),
        { ...settings, concurrency: tools },
      ),
      createWorker(MAINTENANCE_QUEUE, z.unknown(), () => this.#reconcile(), {
        ...settings,
        concurrency: 1,
      }),
    ];
  }

  /**
   * Stops the workers, waiting up to `timeoutMs`; at the deadline, jobs still running are
   * abandoned (`#abandonJobs`) and `onDeadline` is called.
   */
  async closeWorkers(options: CloseOptions): Promise<void> {
    if (this.#workers.length > 0) {
      const { closeWorkers } = await loadQueues();
      if (!(await closeWorkers(this.#workers, options.timeoutMs))) {
        this.#abandonJobs();
        options.onDeadline?.();
      }
      this.#workerRedis?.disconnect();
    }
    this.#cancelSubscriber?.disconnect();
  }

  /** Closes the queues' own connections. */
  async closeQueues(): Promise<void> {
    const { queues } = this.#context;
    if (queues === undefined) return;
    const notices = this.#notices === undefined ? [] : [this.#notices];
    await Promise.all(
      [queues.steps, queues.tools, queues.maintenance, ...notices].map((queue) => queue.close()),
    );
  }

  async submitRun(record: RunRecord, options: EnqueueStepOptions = {}): Promise<boolean> {
    const { keys, queueRedis, maxEvents } = this.#context;
    if (!this.#context.stepsFollowWrites) {
      if (!(await this.#createRun(record))) return false;
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
      CREATE_RUNS.run(queueRedis, ...createRunsArgs(keys, [record], maxEvents), () => {
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
    const submitChunk = this.#context.stepsFollowWrites
      ? (chunk: readonly RunRecord[]) => this.#submitChunkAtOnce(chunk, options)
      : (chunk: readonly RunRecord[]) => this.#submitChunk(chunk, options);
    const existing = await inChunks(records, SUBMIT_CHUNK, SUBMIT_CHUNKS_IN_FLIGHT, submitChunk);
    return existing.flat();
  }

  /**
   * A chunk's records and its steps sent together, as `submitRun` sends one run's: the records
   * on the queue connection, the `addBulk` right behind them, so Redis stores the runs before it
   * adds their steps and the adds do not wait for the script's reply (one round trip a chunk,
   * not two). A run not stored gets a step all the same: one that existed takes it as a
   * wake-up; one of no record does nothing. Should Redis not know the script (it is sent again,
   * behind the add), the steps of the runs it stored are added once more.
   */
  async #submitChunkAtOnce(
    chunk: readonly RunRecord[],
    options: EnqueueStepOptions,
  ): Promise<string[]> {
    const { queueRedis, keys, maxEvents } = this.#context;
    let resent = false;
    const [creating, adding] = await Promise.allSettled([
      CREATE_RUNS.run(queueRedis, ...createRunsArgs(keys, chunk, maxEvents), () => {
        resent = true;
      }),
      this.#addFirstSteps(chunk, options),
    ]);
    if (creating.status === "rejected") throw creating.reason;
    const replies = z.array(z.number()).parse(creating.value);
    if (adding.status === "rejected") throw adding.reason;
    const created = chunk.filter((_, at) => replies[at] === 1);
    if (resent) await this.#addFirstSteps(created, options);
    return chunk.filter((_, at) => replies[at] !== 1).map((record) => record.runId);
  }

  /** A chunk's records, then the steps of those stored once their reply came (on a cluster). */
  async #submitChunk(chunk: readonly RunRecord[], options: EnqueueStepOptions): Promise<string[]> {
    const { redis, keys, maxEvents } = this.#context;
    const replies = z
      .array(z.number())
      .parse(await CREATE_RUNS.run(redis, ...createRunsArgs(keys, chunk, maxEvents)));
    // Added once the chunk's records are stored: a step never comes before its run.
    await this.#addFirstSteps(
      chunk.filter((_, at) => replies[at] === 1),
      options,
    );
    return chunk.filter((_, at) => replies[at] !== 1).map((record) => record.runId);
  }

  /** The first steps of `records`, in one `addBulk`. */
  async #addFirstSteps(records: readonly RunRecord[], options: EnqueueStepOptions): Promise<void> {
    if (records.length === 0) return;
    await this.#context
      .queue("steps")
      .addBulk(records.map((record) => this.#firstStepJob(record, options)));
  }

  /** A new run's first step job, for `addBulk`. */
  #firstStepJob(record: RunRecord, options: EnqueueStepOptions) {
    const priority = record.priority === undefined ? {} : { priority: record.priority };
    const data: StepJob = { ...stepJob(record.runId, undefined, priority), agent: record.agent };
    return {
      name: stepJobName(data),
      data,
      opts: stepJobOptions(record.runId, { ...options, ...priority }),
    };
  }

  async enqueueStep(runId: string, options: EnqueueStepOptions = {}): Promise<void> {
    await this.#context.writesBefore(runId);
    const { giveUp, agent, ...extra } = options;
    const data: StepJob = {
      ...stepJob(runId, giveUp, extra),
      ...(agent === undefined ? {} : { agent }),
    };
    await this.#context.queue("steps").add(stepJobName(data), data, stepJobOptions(runId, options));
  }

  async enqueueTool(job: ToolJob): Promise<void> {
    await this.#context.writesBefore(job.runId);
    // One id per call attempt: while a job for it exists, BullMQ ignores the add. The parts
    // are joined by "|", which jobIdPart always escapes, so two attempts never share an id.
    const key = callKey({ call: { id: job.toolCallId }, interruptions: job.attempt });
    await this.#context.queue("tools").add(toolJobName(job), job, {
      jobId: `tool|${jobIdPart(job.runId)}|${job.iteration}|${jobIdPart(key)}`,
      ...(job.priority === undefined ? {} : { priority: job.priority }),
    });
  }

  modelLimiter(): ModelLimiter {
    const { redis, prefix, pauses } = this.#context;
    this.#limiter ??= redisModelLimiter(redis, prefix, pauses);
    return this.#limiter;
  }

  async enqueueNotice(job: ApprovalNoticeJob, retry: NoticeRetry): Promise<void> {
    if (this.#notices === undefined) throw new Error("The backend's queues are not open yet.");
    const { runId, agent, name, toolCallId } = job.request;
    // One job per call and round while it is kept: saving the same park twice notifies once.
    await this.#notices.add(`${agent} ${name} ${toolCallId}`, job, {
      jobId: `notice-${jobIdPart(runId)}-${jobIdPart(job.round)}`,
      attempts: retry.attempts,
      backoff: { type: "exponential", delay: retry.backoffMs },
    });
  }

  queues(): BackendQueue[] {
    const { queues, prefix } = this.#context;
    if (queues === undefined) return [];
    return [
      { role: "steps", prefix, queue: queues.steps },
      { role: "tools", prefix, queue: queues.tools },
    ];
  }

  /**
   * A job's return value: where its run stands after it (a queue view shows it per job), from
   * the summary of the run as the processor left it, else read from the run's stored summary.
   */
  async #jobOutcome(runId: string, known: RunSummary | undefined): Promise<JobOutcome> {
    let summary = known;
    if (summary === undefined) {
      const { redis, keys } = this.#context;
      const json = await redis.hget(keys.run(runId), "summary");
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
    const { ownsConnection, redis, queueRedis } = this.#context;
    if (ownsConnection) for (const client of [redis, queueRedis]) client.disconnect();
  }

  /**
   * Subscribes to the cancel channel, so that a request from any process reaches this one's
   * jobs, and to the model-pause channel (`PauseWatch`), on one connection.
   */
  async #listenForControl(onCancel: ((runId: string) => void) | undefined): Promise<void> {
    const context = this.#context;
    const subscriber = subscriberOf(context.redis);
    subscriber.on("error", (error) =>
      context.logger.warn({ err: loggableError(error) }, "cancel subscriber error"),
    );
    const { cancelChannel, pauseChannel } = context.keys;
    subscriber.on("message", (channel: string, message: string) => {
      if (channel === pauseChannel) context.pauses.heard(message);
      else if (channel === cancelChannel) onCancel?.(message);
    });
    // Pauses announced while the connection was down are missed: they are read again.
    subscriber.on("close", () => context.pauses.listening(false));
    subscriber.on("ready", () => {
      if (this.#cancelSubscriber === subscriber && !context.closed) context.pauses.listening(true);
    });
    this.#cancelSubscriber = subscriber;
    await subscriber.connect();
    await subscriber.subscribe(cancelChannel, pauseChannel);
    context.pauses.listening(true);
  }

  /**
   * Steps every stranded run again (`findStrandedRuns`; a waiting parent's finished children
   * that did not wake it). Idempotent: the job id names the run and the stranded run's last
   * save, so reconcilers in several processes, or passes that find the same run unchanged,
   * queue one step. Then steps each parked run whose decision waits with no step
   * (`findDecidedStepless`): one job per pass, as a step that finds the decision applied does
   * nothing more.
   */
  async #reconcile(): Promise<void> {
    const { redis, keys, logger } = this.#context;
    const now = Date.now();
    const within = { now, idleMs: this.#options.strandedAfterMs, limit: 1000 };
    const stranded = await findStrandedRuns(redis, keys, within);
    for (const run of stranded) {
      logger.warn(
        {
          runId: run.runId,
          status: run.status,
          ...(run.wake === undefined ? {} : { wake: run.wake }),
        },
        "stepping a stranded run again",
      );
      // A waiting parent moves on by the steps of its finished children (each wakes it).
      for (const runId of run.wake ?? [run.runId]) {
        await this.#context.queue("steps").add("step", stepJob(runId), {
          jobId: `step-${jobIdPart(runId)}-reconcile-${run.updatedAt}`,
        });
      }
    }
    for (const run of await findDecidedStepless(redis, keys, within)) {
      logger.warn({ runId: run.runId }, "stepping a decided run that waits with no step");
      await this.#context.queue("steps").add("step", stepJob(run.runId), {
        jobId: `step-${jobIdPart(run.runId)}-decided-${now}`,
      });
    }
  }
}

function stepJobOptions(runId: string, options: EnqueueStepOptions) {
  return {
    jobId:
      options.jobId === undefined
        ? `step-${jobIdPart(runId)}-${randomUUID()}`
        : jobIdPart(options.jobId),
    ...(options.delayMs === undefined || options.delayMs <= 0 ? {} : { delay: options.delayMs }),
    ...(options.priority === undefined ? {} : { priority: options.priority }),
  };
}

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
