import type { Timer } from "./deps.js";

/** The longest delay `setTimeout` honours (a longer one fires at once). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The timer of the default deps: the platform's `setTimeout`. */
export const systemTimer: Timer = {
  schedule(callback, ms) {
    const handle = setTimeout(callback, ms);
    return () => clearTimeout(handle);
  },
};

export type DeadlineOutcome<T> = { expired: false; value: T } | { expired: true };

export interface DeadlineOptions {
  ms: number;
  /** The caller's signal (the run's); `work` sees it aborted too. */
  signal: AbortSignal;
  timer: Timer;
  /** The abort reason `work`'s signal gets when the deadline passes. */
  reason: () => Error;
}

/**
 * Runs `work` with a signal that aborts when the caller's does or when `ms` pass. At the
 * deadline it stops waiting, even for work that ignores its signal: the signal is aborted and
 * `{ expired: true }` returned; what the work does later is dropped.
 */
export function withDeadline<T>(
  work: (signal: AbortSignal) => Promise<T>,
  options: DeadlineOptions,
): Promise<DeadlineOutcome<T>> {
  const caller = options.signal;
  // One controller linked to the caller's signal by a listener, not `AbortSignal.any`: that
  // one costs two signals and a WeakRef per call, which the garbage collector pays for again.
  const controller = new AbortController();
  return new Promise<DeadlineOutcome<T>>((resolve, reject) => {
    let settled = false;
    let cancelTimer = (): void => {};
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      cancelTimer();
      caller.removeEventListener("abort", onCallerAbort);
      return true;
    };
    // The caller's abort reaches the work at once, and ends the wait too (a turn later), so that
    // work ignoring its signal holds neither the caller nor (through the timer) the process.
    // Work that answers its abort at once settles first, with its own outcome.
    const onCallerAbort = (): void => {
      controller.abort(caller.reason);
      setImmediate(() => {
        if (settle()) reject(abortReason(caller));
      });
    };
    cancelTimer = options.timer.schedule(() => {
      if (!settle()) return;
      controller.abort(options.reason());
      resolve({ expired: true });
    }, options.ms);
    if (caller.aborted) onCallerAbort();
    else caller.addEventListener("abort", onCallerAbort, { once: true });
    let running: Promise<T>;
    try {
      running = work(controller.signal);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (value) => {
        if (settle()) resolve({ expired: false, value });
      },
      (error: unknown) => {
        if (settle()) reject(error);
      },
    );
  });
}

const abortReason = (signal: AbortSignal): unknown =>
  signal.reason ?? new Error("The operation was aborted.");
