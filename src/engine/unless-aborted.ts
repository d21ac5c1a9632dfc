import { canAbort, stopWaiting, waitAborted } from "../core/when-aborted.js";

/** What `unlessAborted` resolves with when the signal aborted first. */
export const ABORTED: unique symbol = Symbol("aborted");

/**
 * The outcome of `work`, or `ABORTED` as soon as `signal` aborts: a provider or handler that
 * ignores its signal cannot keep a cancelled run waiting. The work goes on unobserved; its
 * late outcome (or failure) is dropped.
 */
export function unlessAborted<T>(
  work: Promise<T>,
  signal: AbortSignal,
): Promise<T | typeof ABORTED> {
  if (!canAbort(signal)) return work;
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.resolve(ABORTED);
  }
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    new AbortRace(work, signal, resolve, reject);
  });
}

/**
 * One wait of `unlessAborted`: an object, not a closure per part, as a run held at its model
 * call keeps it alive while the call is out.
 */
class AbortRace<T> {
  readonly #signal: AbortSignal;
  readonly #onAbort: () => void;

  constructor(
    work: Promise<T>,
    signal: AbortSignal,
    resolve: (value: T | typeof ABORTED) => void,
    reject: (error: unknown) => void,
  ) {
    this.#signal = signal;
    this.#onAbort = () => resolve(ABORTED);
    waitAborted(signal, this.#onAbort);
    work.then(
      (value) => {
        this.#stop();
        resolve(value);
      },
      (error: unknown) => {
        this.#stop();
        reject(error);
      },
    );
  }

  #stop(): void {
    stopWaiting(this.#signal, this.#onAbort);
  }
}
