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

// Signals made by `unabortableSignal`: nothing holds their controller.
const unabortable = new WeakSet<AbortSignal>();
const stopNothing = (): void => {};

/**
 * A signal nothing can abort, for a run given none: waits on it (`whenAborted`,
 * `unlessAborted`, deadlines) cost nothing. One per run, like any signal a run is given.
 */
export function unabortableSignal(): AbortSignal {
  const signal = new AbortController().signal;
  unabortable.add(signal);
  return signal;
}

/** False for a signal that can never abort (see `unabortableSignal`). */
export const canAbort = (signal: AbortSignal): boolean => !unabortable.has(signal);

/**
 * Calls `listener` once when `signal` aborts (the caller checks `signal.aborted` first);
 * returns what stops listening.
 */
export function whenAborted(signal: AbortSignal, listener: () => void): () => void {
  if (unabortable.has(signal)) return stopNothing;
  const waiters = waitersOf(signal);
  waiters.add(listener);
  return () => {
    waiters.delete(listener);
  };
}

/**
 * `whenAborted` for a caller that keeps `listener` and stops it with `stopWaiting`: no closure
 * to stop it is made (a wait held for as long as a model call is out keeps one alive).
 */
export function waitAborted(signal: AbortSignal, listener: () => void): void {
  if (!unabortable.has(signal)) waitersOf(signal).add(listener);
}

/** Stops `listener`, given to `waitAborted`, from being called. */
export function stopWaiting(signal: AbortSignal, listener: () => void): void {
  waitersBySignal.get(signal)?.delete(listener);
}
