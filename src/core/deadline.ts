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

const EXPIRED: unique symbol = Symbol("expired");

/**
 * Runs `work` with a signal that aborts when the caller's does or when `ms` pass. At the
 * deadline it stops waiting, even for work that ignores its signal: the signal is aborted and
 * `{ expired: true }` returned; what the work does later is dropped.
 */
export async function withDeadline<T>(
  work: (signal: AbortSignal) => Promise<T>,
  options: DeadlineOptions,
): Promise<DeadlineOutcome<T>> {
  const controller = new AbortController();
  const signal = AbortSignal.any([options.signal, controller.signal]);
  let cancel = (): void => {};
  const expired = new Promise<typeof EXPIRED>((resolve) => {
    cancel = options.timer.schedule(() => resolve(EXPIRED), options.ms);
  });
  // The caller's abort ends the wait too, so that work ignoring its signal holds neither the
  // caller nor (through the deadline's timer) the process. Work that answers its abort at once
  // settles first, with its own outcome.
  let stopListening = (): void => {};
  const stopped = new Promise<never>((_resolve, reject) => {
    const onAbort = (): void => {
      setImmediate(() => reject(abortReason(options.signal)));
    };
    if (options.signal.aborted) onAbort();
    options.signal.addEventListener("abort", onAbort, { once: true });
    stopListening = () => options.signal.removeEventListener("abort", onAbort);
  });
  stopped.catch(() => {});
  let running: Promise<T>;
  try {
    running = work(signal);
  } catch (error) {
    running = Promise.reject(error);
  }
  try {
    const winner = await Promise.race([running, expired, stopped]);
    if (winner !== EXPIRED) return { expired: false, value: winner };
    running.catch(() => {});
    controller.abort(options.reason());
    return { expired: true };
  } catch (error) {
    running.catch(() => {});
    throw error;
  } finally {
    cancel();
    stopListening();
  }
}

const abortReason = (signal: AbortSignal): unknown =>
  signal.reason ?? new Error("The operation was aborted.");
