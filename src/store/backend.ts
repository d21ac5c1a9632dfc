import type { Queue } from "bullmq";
import type { Logger } from "pino";
import type { ToolResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import type { ExtensionStateStore } from "../extensions/state-store.js";
import type { RecorderSink } from "../features/recorder/recorder-sink.js";
import type { StoredCheckpoint } from "./checkpoint.js";
import type { ModelLimiter } from "./model-limiter.js";
import type { EventPage, NumberedEvent } from "./run-feeds.js";
import type { RunPage, RunQuery } from "./run-query.js";
import type { RunRecord, RunRecordStatus, StepJob, StoredDecision, ToolJob } from "./schemas.js";
import type { DecisionRecord, RunSummary } from "./summary.js";
import type { ToolCallRun } from "./tool-call-view.js";

/** One of a backend's BullMQ queues, for queue views such as bull-board. */
export interface BackendQueue {
  role: "steps" | "tools";
  /** The backend's key prefix (two backends on one Redis differ in it). */
  prefix: string;
  queue: Queue;
}

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
}

export interface BackendStartOptions {
  /** Registers workers for both queues; without it this process only submits. */
  processors?: JobProcessors;
  /** Jobs this process works on at once: per queue, or one number for both. */
  concurrency: number | QueueConcurrency;
  logger: Logger;
  /**
   * Called in every process with workers when any process asks to cancel a run (Redis: by
   * pub/sub), so that the jobs working on it here abort at once.
   */
  onCancel?: (runId: string) => void;
}

export interface CloseOptions {
  timeoutMs: number;
  /** Called once at the deadline when jobs are still running. */
  onDeadline?: () => void;
}

/** Jobs of each queue a process works on at once. */
export interface QueueConcurrency {
  steps: number;
  tools: number;
}

/** `BackendStartOptions.concurrency` per queue. */
export const queueConcurrency = (concurrency: number | QueueConcurrency): QueueConcurrency =>
  typeof concurrency === "number" ? { steps: concurrency, tools: concurrency } : concurrency;

/** The outcome of asking for a run's lease. */
export type LeaseOutcome =
  | {
      acquired: true;
      token: number;
      /**
       * The run as it stood when the lease was taken, when the backend reads it in the same
       * round trip (Redis); without it the holder reads the record and the cancel flag itself.
       */
      opened?: OpenedRun;
    }
  /** Another worker holds it for `remainingMs` more; it will see the wake-up left for it. */
  | { acquired: false; remainingMs: number };

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

/** What a tool job reads before it runs its call (`RunBackend.openToolCall`). */
export interface OpenedToolCall {
  /** The run without its conversation (none when unknown). */
  run: ToolCallRun | undefined;
  /** A raw result of the call is committed for the iteration. */
  committed: boolean;
  cancelRequested: boolean;
  /**
   * With `markStarted`: whether this read marked the call attempt started (false: it was
   * marked before, as `markCallStarted` says); absent when it did not try (the run is unknown
   * or finished, the call committed, or a cancel asked).
   */
  started?: boolean;
}

/** A run read together with its lease: its record (none when unknown) and its cancel flag. */
export interface OpenedRun {
  record: RunRecord | undefined;
  cancelRequested: boolean;
  /** At `dispatch`: the raw results committed so far for the run's iteration. */
  raw?: { iteration: number; results: Record<string, ToolResult> };
}

export interface SaveOptions {
  /**
   * Gives the lease up in the same write (the step saves for the last time); the outcome says
   * whether another step asked for the run meanwhile (`released`).
   */
  release?: boolean;
  /** The timeline entry this save appends (phase, model call, raw results), in the same write. */
  checkpoint?: StoredCheckpoint;
  /**
   * Tool jobs to queue right behind the save, sharing its round trip: a job never finds the run
   * as it stood before the save (or before any save of the run issued earlier). A refused save
   * may still leave them queued; a tool job finds the run where it stands and ignores a call
   * the run is not at.
   */
  thenTools?: readonly ToolJob[];
}

export interface SaveOutcome {
  /** Someone asked to cancel the run. */
  cancelRequested: boolean;
  /** Set when the save gave the lease up (`SaveOptions.release`), as `releaseLease` says. */
  released?: { wake: boolean };
  /**
   * A save at `dispatch` on a backend that reads them in the same round trip (Redis): the raw
   * results committed so far for the run's iteration.
   */
  raw?: Record<string, ToolResult>;
}

/**
 * Where durable runs live and how their work is queued. `AgentRuntime` and the workers use
 * only this; `memoryBackend()` and `redisBackend()` implement it with the same behaviour.
 *
 * Retention: when a run finishes (completed, failed or cancelled), its working data — raw
 * results, decisions, in-flight markers, fencing, cancel and wake-up flags — is kept for
 * `retentionMs`, then dropped. The run record (with its final `RunResult` and conversation),
 * its summary, its places in the indexes, its audit trail of decisions and its event log are
 * not expired: they are the run's history, so `list()`, `get()`, `handle(runId).result()` and
 * `events()` keep answering until an operator prunes the run (`pruneRuns`).
 *
 * Summaries and indexes: `createRun` and every `saveRun` write the run's summary (`summarize`)
 * beside the record and keep it in the time indexes `RunIndex` names, so `listRuns` reads one
 * page of summaries at a cost that does not grow with the runs stored.
 *
 * A call's key (`callKey`) names one attempt of a call: its id, then a marked `n#id` after n crash
 * interruptions that asked a person again. In-flight markers and decisions are kept by key.
 */
export interface RunBackend {
  readonly kind: "memory" | "redis";
  /** How long a lease (and a queue job's lock) lasts without renewal. */
  readonly lockDurationMs: number;
  /** How long a finished run's per-run data is kept. */
  readonly retentionMs: number;
  /**
   * Extensions' saved state (per agent, extension, key and session), shared by every process of
   * the backend; never expired, as it belongs to sessions rather than runs.
   */
  readonly extensionState: ExtensionStateStore;
  /** Runs' flight recordings, kept with each run's event log and deleted when it is pruned. */
  readonly recordings: RecorderSink;

  /** Connects, checks the server, and starts workers when `processors` is given. */
  start(options: BackendStartOptions): Promise<void>;
  /**
   * Stops taking jobs, waits up to `timeoutMs` for active ones, then closes everything. Jobs
   * still running at the deadline are left for another worker to recover (nothing of theirs
   * reaches the store any more), `onDeadline` is called so that their signals fire, and
   * `close` returns without waiting for them.
   */
  close(options: CloseOptions): Promise<void>;

  /** Stores a new run, its summary and its index entries; false when `runId` exists already. */
  createRun(record: RunRecord): Promise<boolean>;
  /**
   * Stores a new run (as `createRun`) and queues its first step (as `enqueueStep`); false when
   * `runId` exists already (its record is left as it is, though a step of it may have been
   * queued: a step is a wake-up, which a run takes in any state). Redis sends both at once.
   */
  submitRun(record: RunRecord, options?: EnqueueStepOptions): Promise<boolean>;
  /** The run's record; throws `StoreVersionError` for a record of another `schemaVersion`. */
  loadRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * What a tool job for call `toolCallId` of `iteration` reads, at once (Redis: one script
   * call): the run without its conversation (`toolCallRun`: `StoreVersionError` for another
   * `schemaVersion`, `record_corrupt` when what it reads does not parse), whether the call's
   * raw result is committed, and the cancel flag.
   * `markStarted` (the attempt's `callKey`): in the same atomic read, marks that attempt of the
   * call started as `markCallStarted` does (without events), unless the run is unknown or
   * finished, the call has a committed raw result, or a cancel was asked. A tool job marks so
   * before it re-checks the policy: a mark left by a job that then does not run the handler
   * (stale, or refused or asked about at the re-check) is followed by the call's commit or
   * interruption, or belongs to an attempt the run has left.
   */
  openToolCall(
    runId: string,
    iteration: number,
    toolCallId: string,
    markStarted?: string,
  ): Promise<OpenedToolCall>;
  /**
   * The run's status as last saved, read without its record (cheap); undefined when the run is
   * unknown or its status is not stored apart from its record: then `loadRun` tells.
   */
  runStatus(runId: string): Promise<RunRecordStatus | undefined>;
  /** One page of run summaries, newest first (by `createdAt`, then run id). */
  listRuns(query: RunQuery): Promise<RunPage>;
  /** The run's audit trail: every decision recorded with `decide`, oldest first. */
  auditTrail(runId: string): Promise<DecisionRecord[]>;
  /**
   * Deletes every run that finished (completed, failed or cancelled) before `finishedBefore`
   * (ms since the epoch): its record, summary, index entries, audit trail and per-run data.
   * Returns how many runs it deleted.
   */
  pruneRuns(finishedBefore: number): Promise<number>;

  /** Takes the run's lease with a fresh fencing token, or leaves a wake-up for its holder. */
  acquireLease(runId: string): Promise<LeaseOutcome>;
  /** Extends the lease while `token` still holds it; false when it was lost. */
  renewLease(runId: string, token: number): Promise<boolean>;
  /**
   * Writes the record, refused (throws `LeaseLostError`) when a newer token was issued since
   * `token`: a worker that lost its lease can never overwrite its successor's progress.
   * `events` are appended to the run's log in the same atomic write (none when it is refused).
   * `storedMessages`: how many of the conversation's messages are stored already (the record
   * was loaded or saved with them); only the ones after them are written. Without it, the
   * conversation is written anew.
   * `checkpoint`: the save's entry in the run's timeline (`checkpointOf`), appended to the run's
   * checkpoints in the same atomic write; they are kept as long as the record.
   * A run's saves are applied in the order they are issued, also when one is issued before the
   * one before it resolved, and the jobs one queues (`SaveOptions.thenTools`) after all of them.
   */
  saveRun(
    runId: string,
    token: number,
    record: RunRecord,
    events?: readonly RunEvent[],
    storedMessages?: number,
    options?: SaveOptions,
  ): Promise<SaveOutcome>;
  /** The checkpoints the run's saves appended, oldest first (none for an unknown run). */
  checkpoints(runId: string): Promise<StoredCheckpoint[]>;
  /** Gives the lease up; `wake` is true when another step asked for the run meanwhile. */
  releaseLease(runId: string, token: number): Promise<{ wake: boolean }>;

  /**
   * Commits a handler's raw outcome; idempotent, the first write wins. True when this one won.
   * A step of the run queued (`enqueueStep`) once this is called sees the commit, even when it
   * is queued before this resolves: the two may share a round trip.
   * `events` (what the call's tool job emitted and has not sent yet) are appended to the run's
   * log in the same atomic write, whether or not the commit wins.
   */
  commitRaw(
    runId: string,
    iteration: number,
    result: ToolResult,
    events?: readonly RunEvent[],
  ): Promise<boolean>;
  rawResults(runId: string, iteration: number): Promise<Record<string, ToolResult>>;
  /**
   * Records that this attempt of the call (`callKey`) started its handler; atomic, the first
   * write wins (a tool job marks with its first read: `openToolCall`'s `markStarted`). False
   * when it was recorded before: an earlier delivery of the same tool job started the handler
   * and, unless it committed a raw result, crashed or lost its job in it — the tool's
   * `recovery` decides what happens.
   * `events` (the handler's `tool_start`) are appended to the run's log in the same atomic
   * write when this marks the start, and not at all when the start was marked before.
   */
  markCallStarted(
    runId: string,
    iteration: number,
    callKey: string,
    events?: readonly RunEvent[],
  ): Promise<boolean>;
  /**
   * Records that a call attempt did not run and waits for a person, and why: a crash
   * interrupted it (its tool's recovery is `ask`), or the policy asks about it at dispatch.
   * As with `commitRaw`, a step queued once this is called sees it.
   */
  markCallInterrupted(
    runId: string,
    iteration: number,
    callKey: string,
    reason: string,
  ): Promise<void>;
  /** The iteration's call attempts recorded as waiting for a person: call key → reason. */
  interruptedCalls(runId: string, iteration: number): Promise<Map<string, string>>;
  /**
   * Records a decision on a call attempt (`callKey`) unless one exists (atomic): true if won.
   * The winning decision's `audit` entry joins the run's audit trail in the same write.
   * `check` is given the run's record as stored when the decision is written, in the same
   * atomic step (Redis: the write is refused and the check run again if the record changed
   * since it was read): it throws to refuse the decision, and nothing is written.
   */
  decide(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    check?: (record: RunRecord | undefined) => void,
  ): Promise<boolean>;
  /** The iteration's decisions by call key. */
  decisions(runId: string, iteration: number): Promise<Record<string, StoredDecision>>;
  requestCancel(runId: string): Promise<void>;
  cancelRequested(runId: string): Promise<boolean>;

  /**
   * Appends to the run's event log (bounded) and wakes its readers in every process. When
   * `publishesInOrder`, an append is applied before every `saveRun` of the run issued after it,
   * whether or not its reply has come.
   */
  publish(runId: string, events: RunEvent | readonly RunEvent[]): Promise<void>;
  /**
   * True when a run's appends (`publish`) and saves are applied in the order they are issued
   * (memory; one Redis, where both go on one connection), so that a save may follow an append
   * without waiting for its reply. Not on a cluster.
   */
  readonly publishesInOrder?: boolean;
  /**
   * The run's events from the start of its log, live, ending after its final `result`; only
   * that result when the run has no log (it finished before logs were kept). `live`: a hint
   * that the run is expected to go on (its result is still to come), so the stream starts
   * listening before its first read (Redis: it subscribes first, which saves a read).
   */
  events(runId: string, options?: { live?: boolean }): AsyncIterable<RunEvent>;
  /**
   * The run's events from position `after` on, each with its position, live, ending after its
   * final `result` (a finished run without a log: its result at position 0).
   */
  followEvents(runId: string, after: number): AsyncIterable<NumberedEvent>;
  /** Up to `limit` of the run's events stored now from position `after`, without waiting. */
  readEvents(runId: string, after: number, limit: number): Promise<EventPage>;
  /**
   * Every run's summary each time the run is created or saved, from every process sharing the
   * backend (Redis: a pub/sub channel under the prefix). Resolves once it listens, so no change
   * made after it resolves is missed; the feed ends when `signal` aborts.
   */
  watchRuns(signal: AbortSignal): Promise<AsyncIterable<RunSummary>>;

  /** Queues a run-step job; `giveUp` makes it a give-up step (`StepJob.giveUp`). */
  enqueueStep(runId: string, options?: EnqueueStepOptions): Promise<void>;
  /**
   * Stores new runs and queues their first steps, in bulk (Redis: a script call and an
   * `addBulk` per chunk of runs, each run's step queued after its record is stored). Returns
   * the ids of runs that existed already (nothing is written for them).
   */
  submitRuns(records: readonly RunRecord[], options?: EnqueueStepOptions): Promise<string[]>;
  /** Queues a tool job; while one for the same call is known, the add does nothing. */
  enqueueTool(job: ToolJob): Promise<void>;
  /** The limits on model calls that every process of this backend shares. */
  modelLimiter(): ModelLimiter;
  /** The BullMQ queues the runs' jobs go through, once started (none in memory). */
  queues?(): BackendQueue[];
}
