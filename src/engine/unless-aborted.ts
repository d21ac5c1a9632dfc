import { canAbort, whenAborted } from "../core/when-aborted.js";

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
    const stopListening = whenAborted(signal, () => resolve(ABORTED));
    work.then(
      (value) => {
        stopListening();
        resolve(value);
      },
      (error: unknown) => {
        stopListening();
        reject(error);
      },
    );
  });
}
