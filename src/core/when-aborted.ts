// One EventTarget listener per signal, whatever the number of waits on it: a run waits on its
// signal at every stage and around every provider and tool call, and adding and removing an
// EventTarget listener each time costs more than the wait itself. Weakly keyed, so a signal's
// waiters go with it.
const waitersBySignal = new WeakMap<AbortSignal, Set<() => void>>();

function waitersOf(signal: AbortSignal): Set<() => void> {
  let waiters = waitersBySignal.get(signal);
  if (waiters === undefined) {
    const created = new Set<() => void>();
    signal.addEventListener(
      "abort",
      () => {
        // Live iteration: a listener stopped by an earlier one is skipped, as EventTarget does.
        for (const wake of created) {
          created.delete(wake);
          wake();
        }
      },
      { once: true },
    );
    waitersBySignal.set(signal, created);
    waiters = created;
  }
  return waiters;
}

/**
 * Calls `listener` once when `signal` aborts (the caller checks `signal.aborted` first);
 * returns what stops listening.
 */
export function whenAborted(signal: AbortSignal, listener: () => void): () => void {
  const waiters = waitersOf(signal);
  waiters.add(listener);
  return () => {
    waiters.delete(listener);
  };
}
