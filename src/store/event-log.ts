import type { RunEvent } from "../engine/run-events.js";
import type { RecorderSink } from "../features/recorder/recorder-sink.js";
import type { StoredCheckpoint } from "./checkpoint.js";
import type { EventPage, NumberedEvent } from "./run-feeds.js";

/**
 * The event log's role: each run's live events (bounded, readable from any process), the
 * checkpoints its saves appended (its timeline), and its flight recordings. Kept as long as the
 * run's record.
 */
export interface EventLog {
  /** Runs' flight recordings, kept with each run's event log and deleted when it is pruned. */
  readonly recordings: RecorderSink;
  /**
   * True when a run's appends (`publish`) and saves are applied in the order they are issued
   * (memory; one Redis, where both go on one connection), so that a save may follow an append
   * without waiting for its reply. Not on a cluster.
   */
  readonly publishesInOrder?: boolean;
  /**
   * Appends to the run's event log (bounded) and wakes its readers in every process. When
   * `publishesInOrder`, an append is applied before every `saveRun` of the run issued after it,
   * whether or not its reply has come.
   */
  publish(runId: string, events: RunEvent | readonly RunEvent[]): Promise<void>;
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
  /** The checkpoints the run's saves appended, oldest first (none for an unknown run). */
  checkpoints(runId: string): Promise<StoredCheckpoint[]>;
}
