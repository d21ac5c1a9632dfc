/** What `unlessAborted` resolves with when the signal aborted first. */
export const ABORTED: unique symbol = Symbol("aborted");

// One abort listener per signal, whatever the number of waits on it: a run waits on its signal
// at every stage, and adding and removing an EventTarget listener each time costs more than
// the stage itself. Weakly keyed, so a signal and its waiters go when the signal does.
const waitersBySignal = new WeakMap<AbortSignal, Set<() => void>>();

function waitersOf(signal: AbortSignal): Set<() => void> {
  let waiters = waitersBySignal.get(signal);
  if (waiters === undefined) {
    const created = new Set<() => void>();
    signal.addEventListener(
      "abort",
      () => {
        for (const wake of created) wake();
        created.clear();
      },
      { once: true },
    );
    waitersBySignal.set(signal, created);
    waiters = created;
  }
  return waiters;
}

/**
 * The outcome of `work`, or `ABORTED` as soon as `signal` aborts: a provider or handler that
 * ignores its signal cannot keep a cancelled run waiting. The work goes on unobserved; its
 * late outcome (or failure) is dropped.
 */
export function unlessAborted<T>(
  work: Promise<T>,
  signal: AbortSignal,
): Promise<T | typeof ABORTED> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.resolve(ABORTED);
  }
  const waiters = waitersOf(signal);
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    waiters.add(onAbort);
    work.then(
      (value) => {
        waiters.delete(onAbort);
        resolve(value);
      },
      (error: unknown) => {
        waiters.delete(onAbort);
        reject(error);
      },
    );
  });
}
