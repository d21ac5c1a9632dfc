import type { Logger } from "pino";
import type { CallLedger } from "./call-ledger.js";
import type { EventLog } from "./event-log.js";
import type { JobProcessors, JobQueue, QueueConcurrency } from "./job-queue.js";
import type { Leases } from "./leases.js";
import type { RunStore } from "./run-store.js";
import type { RunTree } from "./run-tree.js";

export type { CallLedger, OpenedToolCall } from "./call-ledger.js";
export type { EventLog } from "./event-log.js";
export {
  type EnqueueStepOptions,
  type JobDelivery,
  type JobProcessors,
  type JobQueue,
  type QueueConcurrency,
  queueConcurrency,
} from "./job-queue.js";
export type { HeldToken, LeaseOutcome, Leases, OpenedRun } from "./leases.js";
export type { RunStore, SaveOptions, SaveOutcome } from "./run-store.js";
export type { RunLink, RunTree } from "./run-tree.js";

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

/**
 * What every backend has besides its roles: its kind, its retention, and starting and closing
 * (connections, checks, workers).
 *
 * Retention: when a run finishes (completed, failed or cancelled), its working data — raw
 * results, decisions, in-flight markers, fencing, cancel and wake-up flags — is kept for
 * `retentionMs`, then dropped. The run record (with its final `RunResult` and conversation),
 * its summary, its places in the indexes, its audit trail of decisions and its event log are
 * not expired: they are the run's history, so `list()`, `get()`, `handle(runId).result()` and
 * `events()` keep answering until an operator prunes the run (`pruneRuns`).
 */
export interface BackendLifecycle {
  readonly kind: "memory" | "redis";
  /** How long a finished run's per-run data is kept. */
  readonly retentionMs: number;
  /** Connects, checks the server, and starts workers when `processors` is given. */
  start(options: BackendStartOptions): Promise<void>;
  /**
   * Stops taking jobs, waits up to `timeoutMs` for active ones, then closes everything. Jobs
   * still running at the deadline are left for another worker to recover (nothing of theirs
   * reaches the store any more), `onDeadline` is called so that their signals fire, and
   * `close` returns without waiting for them.
   */
  close(options: CloseOptions): Promise<void>;
}

/**
 * Where durable runs live and how their work is queued: the roles of the run store, composed
 * (DESIGN.md "The run store, by role"). `AgentRuntime` and the workers use only these;
 * `memoryBackend()` and `redisBackend()` implement each role with the same behaviour, and the
 * contract suite checks each role on both.
 * `RunTree` holds child runs' links and the children waiting parents wait for (SPEC §14).
 */
export interface RunBackend
  extends BackendLifecycle,
    RunStore,
    Leases,
    CallLedger,
    EventLog,
    JobQueue,
    RunTree {}

/** A backend's roles, each a separate object, from which `composeBackend` builds a backend. */
export interface BackendRoles {
  lifecycle: BackendLifecycle;
  store: RunStore;
  leases: Leases;
  ledger: CallLedger;
  events: EventLog;
  jobs: JobQueue;
  tree: RunTree;
}
