import type { Timer } from "./deps.js";
import { stopWaiting, waitAborted, whenAborted } from "./when-aborted.js";

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
  /** Whether the work's signal is aborted, read without making the signal. */
  readonly aborted: boolean;
}

const stopNothing = (): void => {};

/**
 * One deadline-bound call: its deadline, its wait on the caller's signal and the signal of its
 * work, in one object. A held call (a model call waiting on its provider) keeps all of it alive
 * for as long as it waits, so it is one object with four small callbacks rather than a closure
 * per part.
 *
 * The work's signal is made only when the work reads it: most tool handlers never do, and an
 * AbortController is among the dearest objects a call would make. Once the call is over
 * (`#detach`), a signal the work holds, or reads later, keeps following the caller's, as one
 * made by `AbortSignal.any` would: work it started may outlive the call.
 */
class DeadlineCall<T> implements DeadlineScope {
  readonly #caller: AbortSignal;
  readonly #resolve: (outcome: DeadlineOutcome<T>) => void;
  readonly #reject: (error: unknown) => void;
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #detached = false;
  #settled = false;
  #cancelTimer = stopNothing;
  /** Set while the call waits on the caller's signal. */
  #onCallerAbort: (() => void) | undefined;

  constructor(
    work: (scope: DeadlineScope) => Promise<T>,
    options: DeadlineOptions,
    resolve: (outcome: DeadlineOutcome<T>) => void,
    reject: (error: unknown) => void,
  ) {
    this.#caller = options.signal;
    this.#resolve = resolve;
    this.#reject = reject;
    const { reason } = options;
    this.#cancelTimer = options.timer.schedule(() => this.#expire(reason), options.ms);
    if (this.#caller.aborted) this.#callerAborted();
    else {
      this.#onCallerAbort = () => this.#callerAborted();
      waitAborted(this.#caller, this.#onCallerAbort);
    }
    let running: Promise<T>;
    try {
      running = work(this);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (value) => {
        if (this.#settle()) resolve({ expired: false, value });
      },
      (error: unknown) => {
        if (this.#settle()) reject(error);
      },
    );
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
      else if (this.#detached) this.#follow();
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  #abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }

  /** Ends the wait once; false when it had ended. */
  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#cancelTimer();
    if (this.#onCallerAbort !== undefined) stopWaiting(this.#caller, this.#onCallerAbort);
    this.#detach();
    return true;
  }

  #expire(reason: () => Error): void {
    if (this.#settled) return;
    this.#abort(reason());
    this.#settle();
    this.#resolve({ expired: true });
  }

  // The caller's abort reaches the work at once, and ends the wait too (a turn later), so that
  // work ignoring its signal holds neither the caller nor (through the timer) the process.
  // Work that answers its abort at once settles first, with its own outcome.
  #callerAborted(): void {
    const caller = this.#caller;
    this.#abort(caller.reason);
    setImmediate(() => {
      if (this.#settle()) this.#reject(abortReason(caller));
    });
  }

  /** The call is over: from now on only the caller's abort matters. */
  #detach(): void {
    this.#detached = true;
    if (this.#controller !== undefined && !this.#aborted) this.#follow();
  }

  #follow(): void {
    const caller = this.#caller;
    if (caller.aborted) this.#abort(caller.reason);
    else whenAborted(caller, () => this.#abort(caller.reason));
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
  return new Promise<DeadlineOutcome<T>>((resolve, reject) => {
    new DeadlineCall(work, options, resolve, reject);
  });
}

const abortReason = (signal: AbortSignal): unknown =>
  signal.reason ?? new Error("The operation was aborted.");
