import type { ToolResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import type { ExtensionStateStore } from "../extensions/state-store.js";
import type { StoredCheckpoint } from "./checkpoint.js";
import type { Overview, OverviewQuery } from "./overview.js";
import type { RunPage, RunQuery } from "./run-query.js";
import type { RunRecord, RunRecordStatus, ToolJob } from "./schemas.js";
import type { RunSummary } from "./summary.js";

/** What a fenced save writes besides the record (`RunStore.saveRun`). */
export interface SaveOptions {
  /** Appended to the run's event log in the same atomic write (none when it is refused). */
  events?: readonly RunEvent[];
  /**
   * How many of the conversation's messages are stored already (the record was loaded or
   * saved with them); only the ones after them are written. Without it, the conversation is
   * written anew.
   */
  storedMessages?: number;
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

/** What `RunStore.pruneRuns` did: runs deleted, and finished runs skipped as unreadable. */
export interface PruneOutcome {
  deleted: number;
  unreadable: number;
}

/** What `RunStore.deleteRun` did: deleted, no such run, or kept as it is not finished. */
export type DeleteOutcome = "deleted" | "unknown" | "unfinished";

/**
 * The run store's role: run records, their summaries and indexes, list, get and prune, and the
 * overview feed. A record is saved only under the run's lease (`Leases`): the save is fenced.
 *
 * Summaries and indexes: `createRun` and every `saveRun` write the run's summary beside the
 * record and keep it in the time indexes `RunIndex` names, so `listRuns` reads one page of
 * summaries at a cost that does not grow with the runs stored.
 */
export interface RunStore {
  /**
   * Extensions' saved state (per agent, extension, key and session), shared by every process of
   * the backend; never expired, as it belongs to sessions rather than runs.
   */
  readonly extensionState: ExtensionStateStore;
  /**
   * Stores a new run, its summary and its index entries; false when `runId` exists already. A
   * child run (one with `parentRunId` and `parentToolCallId`) is stored only while its link is
   * (`RunTree.linkChild`; else false, nothing stored: its call released it), and is told on its
   * parent's event log (`childStartedOf`) in the same write, so that its `child_started` is there
   * exactly once (none when the parent is gone). `JobQueue.submitRun(s)` store runs the same way.
   */
  createRun(record: RunRecord): Promise<boolean>;
  /** The run's record; throws `StoreVersionError` for a record of another `schemaVersion`. */
  loadRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * The run's status as last saved, read without its record (cheap); undefined when the run is
   * unknown or its status is not stored apart from its record: then `loadRun` tells.
   */
  runStatus(runId: string): Promise<RunRecordStatus | undefined>;
  /** One page of run summaries, newest first (by `createdAt`, then run id). */
  listRuns(query: RunQuery): Promise<RunPage>;
  /**
   * The overview over a window (SPEC §12.1), from counters kept per time bucket as runs are
   * created and saved (in the same atomic write), never by reading runs: see `overview.ts`.
   */
  overview(query: OverviewQuery): Promise<Overview>;
  /**
   * Deletes every run that finished (completed, failed or cancelled) before `finishedBefore`
   * (ms since the epoch): its record, summary, index entries, audit trail and per-run data.
   * A run whose stored summary cannot be read is skipped and counted (`unreadable`), never
   * thrown: `deleteRun` removes it.
   */
  pruneRuns(finishedBefore: number): Promise<PruneOutcome>;
  /**
   * Deletes one run and every key it has, when it is finished or its record or summary cannot
   * be read; an unfinished run that reads well is kept (`"unfinished"`). Its place in its tree
   * goes with it, and its children no run of which is stored (`RunTree`), as `pruneRuns` does.
   */
  deleteRun(runId: string): Promise<DeleteOutcome>;
  /**
   * Deletes every value of extension state saved for `sessionId` (any agent, extension or key);
   * returns how many it deleted.
   */
  deleteSessionState(sessionId: string): Promise<number>;
  /**
   * Writes the record, refused (throws `LeaseLostError`) when a newer token was issued since
   * `token`: a worker that lost its lease can never overwrite its successor's progress. What
   * the save writes besides the record is in `options` (events, new messages, checkpoint, lease
   * release, tool jobs), all in the same atomic write.
   * A run's saves are applied in the order they are issued, also when one is issued before the
   * one before it resolved, and the jobs one queues (`SaveOptions.thenTools`) after all of them.
   */
  saveRun(
    runId: string,
    token: number,
    record: RunRecord,
    options?: SaveOptions,
  ): Promise<SaveOutcome>;
  /**
   * Every run's summary each time the run is created or saved, from every process sharing the
   * backend (Redis: a pub/sub channel under the prefix). Resolves once it listens, so no change
   * made after it resolves is missed; the feed ends when `signal` aborts.
   */
  watchRuns(signal: AbortSignal): Promise<AsyncIterable<RunSummary>>;
}
