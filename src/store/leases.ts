import type { ToolResult } from "../core/values.js";
import type { RunRecord } from "./schemas.js";

/** A run read together with its lease: its record (none when unknown) and its cancel flag. */
export interface OpenedRun {
  record: RunRecord | undefined;
  cancelRequested: boolean;
  /** At `dispatch`: the raw results committed so far for the run's iteration. */
  raw?: { iteration: number; results: Record<string, ToolResult> };
}

/** A lease a process holds: its run and fencing token. */
export interface HeldToken {
  runId: string;
  token: number;
}

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

/**
 * The leases' role: who advances a run (one worker at a time), fencing tokens that refuse a
 * stale holder's saves (`RunStore.saveRun`), wake-ups left for the holder, and cancel requests
 * that reach it.
 */
export interface Leases {
  /** How long a lease (and a queue job's lock) lasts without renewal. */
  readonly lockDurationMs: number;
  /** Takes the run's lease with a fresh fencing token, or leaves a wake-up for its holder. */
  acquireLease(runId: string): Promise<LeaseOutcome>;
  /** Extends the lease while `token` still holds it; false when it was lost. */
  renewLease(runId: string, token: number): Promise<boolean>;
  /**
   * `renewLease` of every lease a process holds, in one round trip where the store can: one
   * answer per lease, in order. A process renews its leases together, once a tick, rather than
   * one command (and one timer) per run.
   */
  renewLeases(leases: readonly HeldToken[]): Promise<boolean[]>;
  /** Gives the lease up; `wake` is true when another step asked for the run meanwhile. */
  releaseLease(runId: string, token: number): Promise<{ wake: boolean }>;
  /**
   * Asks every process to cancel the run: its holder sees it at its next save or at once. `by`
   * (who asked) is kept for as long as the run's record; the first one asked wins.
   */
  requestCancel(runId: string, by?: string): Promise<void>;
  cancelRequested(runId: string): Promise<boolean>;
  /** Who asked to cancel the run (`requestCancel`'s `by`), when someone named did. */
  cancelledBy(runId: string): Promise<string | undefined>;
}
