/**
 * The runs this process is working on right now, with the AbortController of each job, so a
 * cancel from this process takes effect at once (other processes see the stored request).
 */
export class ActiveRuns {
  readonly #controllers = new Map<string, Set<AbortController>>();

  /** Registers a job's controller; call the returned function when the job ends. */
  track(runId: string, controller: AbortController): () => void {
    const set = this.#controllers.get(runId) ?? new Set<AbortController>();
    set.add(controller);
    this.#controllers.set(runId, set);
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
}
