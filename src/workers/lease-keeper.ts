import type { Logger } from "pino";
import { loggableError } from "../core/errors.js";
import type { HeldToken, Leases } from "../store/leases.js";

/** A lease the keeper renews until `stop()`. */
export interface KeptLease {
  /**
   * Renews it no more. `released`: the step's save gave the lease up, so a renewal that found
   * it gone meanwhile lost nothing.
   */
  stop(options?: { released?: boolean }): void;
}

/**
 * A kept lease: the keeper's record and the step's handle in one object (a step held at its
 * model call keeps it alive for as long as it waits).
 */
class Kept implements KeptLease, HeldToken {
  readonly runId: string;
  readonly token: number;
  /** True once the process stops renewing (its shutdown deadline passed). */
  readonly stopped: () => boolean;
  /** A renewal found the lease gone (or another's) while the step held it. */
  lost = false;
  readonly #drop: (kept: Kept, stopping: { released?: boolean }) => void;

  constructor(
    runId: string,
    token: number,
    stopped: () => boolean,
    drop: (kept: Kept, stopping: { released?: boolean }) => void,
  ) {
    this.runId = runId;
    this.token = token;
    this.stopped = stopped;
    this.#drop = drop;
  }

  stop(stopping: { released?: boolean } = {}): void {
    this.#drop(this, stopping);
  }
}

// Renewals a lease gets per lockDurationMs: a lease then outlives a renewal that comes late by
// up to three quarters of its duration (an event loop busy with other steps, a slow Redis).
const RENEWALS_PER_LEASE = 4;

/**
 * Renews every lease the steps of one process hold, together: one timer and one round trip
 * (`renewLeases`) per tick, however many runs are held. A timer and a command per run made a
 * process holding hundreds of runs queue hundreds of renewals behind the work that delays
 * them. Each tick sends its renewal even while an earlier one is still out: what counts is when
 * Redis runs it, and a slow reply must not cost the leases their next renewal. A lease found gone
 * is renewed no more, and reported as lost when its step ends, unless the step's own save gave
 * it up: a step's last save releases the lease in the same write, and a renewal sent before
 * its reply is heard finds it gone (under a busy event loop, seconds of every step). A lease
 * lost for real (it ran out and another worker took the run) leaves the step's fenced saves
 * refused from then on.
 */
export class LeaseKeeper {
  readonly #leases: Pick<Leases, "lockDurationMs" | "renewLeases">;
  readonly #logger: Logger;
  readonly #held = new Set<Kept>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(leases: Pick<Leases, "lockDurationMs" | "renewLeases">, logger: Logger) {
    this.#leases = leases;
    this.#logger = logger;
  }

  /** Renews the lease of `runId` held with `token` until the returned `stop()`. */
  keep(runId: string, token: number, options: { stopped: () => boolean }): KeptLease {
    const kept = new Kept(runId, token, options.stopped, this.#drop);
    this.#held.add(kept);
    if (this.#timer === undefined) {
      const everyMs = Math.max(1, Math.floor(this.#leases.lockDurationMs / RENEWALS_PER_LEASE));
      this.#timer = setInterval(() => void this.#renew(), everyMs);
      this.#timer.unref();
    }
    return kept;
  }

  /** Renews `kept` no more (its `stop`); one function for every lease of the keeper. */
  readonly #drop = (kept: Kept, stopping: { released?: boolean }): void => {
    if (!this.#held.delete(kept)) return;
    // Judged at the end: a renewal sent while the step's releasing save was under way
    // finds the lease gone, which is no loss.
    if (kept.lost && stopping.released !== true) {
      this.#logger.warn({ runId: kept.runId }, "lost the run's lease while stepping");
    }
    if (this.#held.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  };

  /** How many leases are kept now. */
  get size(): number {
    return this.#held.size;
  }

  async #renew(): Promise<void> {
    // After the shutdown deadline the leases run out, so that other workers can take the runs.
    const due = [...this.#held].filter((kept) => !kept.lost && !kept.stopped());
    if (due.length === 0) return;
    try {
      const renewed = await this.#leases.renewLeases(
        due.map(({ runId, token }) => ({ runId, token })),
      );
      due.forEach((kept, index) => {
        if (renewed[index] === false) kept.lost = true;
      });
    } catch (error) {
      this.#logger.warn({ err: loggableError(error), leases: due.length }, "lease renewal failed");
    }
  }
}

const keepers = new WeakMap<object, LeaseKeeper>();

/** The lease keeper of the process's workers on `backend` (one per backend). */
export function leaseKeeperOf(
  backend: Pick<Leases, "lockDurationMs" | "renewLeases">,
  logger: Logger,
): LeaseKeeper {
  let keeper = keepers.get(backend);
  if (keeper === undefined) {
    keeper = new LeaseKeeper(backend, logger);
    keepers.set(backend, keeper);
  }
  return keeper;
}
