import type { ApprovalNoticeJob } from "./approval-request.js";
import type { ModelLimiter } from "./model-limiter.js";
import type { RunRecord, StepJob, ToolJob } from "./schemas.js";
import type { ToolCallRun } from "./tool-call-view.js";

/** How a job reached the worker. */
export interface JobDelivery {
  /**
   * True when the queue delivers the job again because the worker that had it stopped
   * answering (it crashed, or lost its lock): that worker may still hold the run's lease.
   */
  redelivered: boolean;
  /**
   * Set when the queue gave the job up for good (its attempts or re-deliveries ran out), to
   * say why: the processor then only settles what the job leaves unfinished, and runs nothing.
   */
  gaveUp?: string;
}

/**
 * What the workers of this process do with each kind of job. Each resolves with the run as the
 * job left it when the processor knows it (a queue view shows where the run stands after each
 * job); without it the backend reads the run.
 */
export interface JobProcessors {
  step(job: StepJob, delivery: JobDelivery): Promise<RunRecord | undefined>;
  /** Resolves with the run as the job found it (`openToolCall`). */
  tool(job: ToolJob, delivery: JobDelivery): Promise<ToolCallRun | undefined>;
  /**
   * Delivers an approval notice (the approval webhook); throws to be retried. Without it this
   * process works no notice jobs.
   */
  notice?(job: ApprovalNoticeJob, delivery: JobDelivery): Promise<void>;
}

/** How a notice job is retried: attempts in all, and the first retry's delay (then doubling). */
export interface NoticeRetry {
  attempts: number;
  backoffMs: number;
}

/** Jobs of each queue a process works on at once. */
export interface QueueConcurrency {
  steps: number;
  tools: number;
}

/** `BackendStartOptions.concurrency` per queue. */
export const queueConcurrency = (concurrency: number | QueueConcurrency): QueueConcurrency =>
  typeof concurrency === "number" ? { steps: concurrency, tools: concurrency } : concurrency;

export interface EnqueueStepOptions {
  delayMs?: number;
  /** The run's priority (BullMQ's: 1 first … 2,097,152 last); absent: before any prioritized job. */
  priority?: number;
  /**
   * A deterministic job id: while a job with this id is known (waiting, delayed, running or
   * kept finished), adding another does nothing.
   */
  jobId?: string;
  /** Since when the run's model call has been waiting for its rate limit (`StepJob`). */
  rateLimitedSince?: number;
  /** Makes it an approval-timeout step (`StepJob.approvalTimeout`). */
  approvalTimeout?: StepJob["approvalTimeout"];
  /** The run's agent, to name the job on a queue view. */
  agent?: string | undefined;
  /** Why an earlier step job of the run failed for good. */
  giveUp?: string;
}

/**
 * The job queue's role: run-step and tool jobs (BullMQ on Redis, an in-process queue in
 * memory), submitting runs with their first step, and the model-call limits every process of
 * the backend shares. Its workers start with the backend (`RunBackend.start`).
 */
export interface JobQueue {
  /**
   * Stores a new run (as `createRun`, a child's `child_started` with it) and queues its first
   * step (as `enqueueStep`); false when `runId` exists already (its record is left as it is,
   * though a step of it may have been queued: a step is a wake-up, which a run takes in any
   * state). Redis sends both at once.
   */
  submitRun(record: RunRecord, options?: EnqueueStepOptions): Promise<boolean>;
  /**
   * Stores new runs and queues their first steps, in bulk (Redis: a script call and an
   * `addBulk` per chunk of runs, each run's step queued behind its record, sent together as
   * `submitRun` sends them). Returns the ids of runs that existed already (nothing is written
   * for them, though a step of them may have been queued, as by `submitRun`), and of children
   * not stored as their link was gone (`createRun`; a step queued for one finds no run). Each
   * child stored is told on its parent's log in the write that stores it.
   */
  submitRuns(records: readonly RunRecord[], options?: EnqueueStepOptions): Promise<string[]>;
  /** Queues a run-step job; `giveUp` makes it a give-up step (`StepJob.giveUp`). */
  enqueueStep(runId: string, options?: EnqueueStepOptions): Promise<void>;
  /** Queues a tool job; while one for the same call is known, the add does nothing. */
  enqueueTool(job: ToolJob): Promise<void>;
  /** The limits on model calls that every process of this backend shares. */
  modelLimiter(): ModelLimiter;
  /**
   * Queues an approval notice (the webhook's delivery), retried with exponential backoff: a
   * BullMQ job on Redis (at least once, a crashed worker's job is delivered again; one job per
   * call and round while it is kept), an in-process job in memory.
   */
  enqueueNotice(job: ApprovalNoticeJob, retry: NoticeRetry): Promise<void>;
}
