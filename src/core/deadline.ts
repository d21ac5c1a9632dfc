import type { Timer } from "./deps.js";
import { whenAborted } from "./when-aborted.js";

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
  /**
   * The caller's signal (the run's); `work` sees it aborted too. A signal the work read stays
   * linked to it until it aborts: pass one that lives no longer than the run (or call).
   */
  signal: AbortSignal;
  timer: Timer;
  /** The abort reason `work`'s signal gets when the deadline passes. */
  reason: () => Error;
}

/** What deadline-bound work is given: its signal, made when first read. */
export interface DeadlineScope {
  /** Aborted when the caller's signal aborts or the deadline passes. */
  readonly signal: AbortSignal;
}

/**
 * The signal of one deadline-bound call, made only when the work reads it: most tool handlers
 * never do, and an AbortController is among the dearest objects a call would make. Once the
 * call is over (`detach`), a signal the work holds, or reads later, keeps following the
 * caller's, as one made by `AbortSignal.any` would: work it started may outlive the call.
 */
class LazyAbort implements DeadlineScope {
  readonly #caller: AbortSignal;
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #detached = false;

  constructor(caller: AbortSignal) {
    this.#caller = caller;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
      else if (this.#detached) this.#follow();
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }

  /** The call is over: from now on only the caller's abort matters. */
  detach(): void {
    this.#detached = true;
    if (this.#controller !== undefined && !this.#aborted) this.#follow();
  }

  #follow(): void {
    const caller = this.#caller;
    if (caller.aborted) this.abort(caller.reason);
    else whenAborted(caller, () => this.abort(caller.reason));
  }
}

/**
 * Runs `work` with a signal that aborts when the caller's does or when `ms` pass. At the
 * deadline it stops waiting, even for work that ignores its signal: the signal is aborted and
 * `{ expired: true }` returned; what the work does later is dropped.
 */
export function withDeadline<T>(
  work: (scope: DeadlineScope) => Promise<T>,
  options: DeadlineOptions,
): Promise<DeadlineOutcome<T>> {
  const caller = options.signal;
  const scope = new LazyAbort(caller);
  return new Promise<DeadlineOutcome<T>>((resolve, reject) => {
    let settled = false;
    let cancelTimer = (): void => {};
    let stopListening = (): void => {};
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      cancelTimer();
      stopListening();
      scope.detach();
      return true;
    };
    // The caller's abort reaches the work at once, and ends the wait too (a turn later), so that
    // work ignoring its signal holds neither the caller nor (through the timer) the process.
    // Work that answers its abort at once settles first, with its own outcome.
    const onCallerAbort = (): void => {
      scope.abort(caller.reason);
      setImmediate(() => {
        if (settle()) reject(abortReason(caller));
      });
    };
    cancelTimer = options.timer.schedule(() => {
      if (settled) return;
      scope.abort(options.reason());
      settle();
      resolve({ expired: true });
    }, options.ms);
    if (caller.aborted) onCallerAbort();
    else stopListening = whenAborted(caller, onCallerAbort);
    let running: Promise<T>;
    try {
      running = work(scope);
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
