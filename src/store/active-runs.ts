/** Why a job's signal fired when its process stopped waiting for it (see `ActiveRuns.shutDown`). */
const shutdownReasons = new WeakSet<object>();

/**
 * True when `signal` fired because this process is shutting down, not because the run was
 * cancelled: the job must leave the run as it stands, for another worker to recover.
 */
export function abortedByShutdown(signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  const reason: unknown = signal.reason;
  return typeof reason === "object" && reason !== null && shutdownReasons.has(reason);
}

/**
 * The runs this process is working on right now, with the AbortController of each job, so a
 * cancel from this process takes effect at once (other processes see the stored request).
 */
export class ActiveRuns {
  readonly #controllers = new Map<string, Set<AbortController>>();
  #stopped = false;

  /** True once `shutDown()` gave up on the jobs still running. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Registers a job's controller; call the returned function when the job ends. */
  track(runId: string, controller: AbortController): () => void {
    const set = this.#controllers.get(runId) ?? new Set<AbortController>();
    set.add(controller);
    this.#controllers.set(runId, set);
    if (this.#stopped) controller.abort(shutdownReason());
    return () => {
      set.delete(controller);
      if (set.size === 0 && this.#controllers.get(runId) === set) this.#controllers.delete(runId);
    };
  }

  /** Aborts every job of the run in this process; false when there was none. */
  abort(runId: string): boolean {
    const set = this.#controllers.get(runId);
    if (set === undefined) return false;
    for (const controller of set) controller.abort();
    return true;
  }

  /**
   * The process stops waiting for its jobs: every job's signal fires with a shutdown reason
   * (`abortedByShutdown`), and jobs that start later are aborted as they start.
   */
  shutDown(): void {
    this.#stopped = true;
    for (const set of this.#controllers.values()) {
      for (const controller of set) controller.abort(shutdownReason());
    }
  }
}

function shutdownReason(): Error {
  const reason = new Error(
    "The worker shut down before the job finished; another worker recovers it.",
  );
  reason.name = "WorkerShutdown";
  shutdownReasons.add(reason);
  return reason;
}
