import { RateLimiterMemory, RateLimiterRes } from "../core/load-rate-limiter.js";

/** How many wrong bearer tokens one address may show, and for how long it is then refused. */
export interface GuessLimit {
  /** Wrong tokens allowed per window; the next one is answered 429. @defaultValue 5 */
  failures?: number | undefined;
  /** The window, and how long an address that went over it is refused (ms). @defaultValue 60000 */
  windowMs?: number | undefined;
}

/**
 * Counts wrong bearer tokens by client address (rate-limiter-flexible, in memory): an address
 * that shows more than `failures` of them within `windowMs` is refused (429, `Retry-After`) for
 * `windowMs`, whatever it shows meanwhile. A right token costs nothing.
 */
export class TokenGuesses {
  readonly #failures: number;
  readonly #limiter: RateLimiterMemory;

  constructor(limit: GuessLimit = {}) {
    this.#failures = limit.failures ?? 5;
    const seconds = Math.max(1, Math.ceil((limit.windowMs ?? 60_000) / 1000));
    this.#limiter = new RateLimiterMemory({
      points: this.#failures,
      duration: seconds,
      blockDuration: seconds,
    });
  }

  /** Seconds `address` must wait before it may show a token again; 0 when it may now. */
  async refusedFor(address: string): Promise<number> {
    const state = await this.#limiter.get(address);
    return state !== null && state.consumedPoints > this.#failures ? secondsOf(state) : 0;
  }

  /** Counts a wrong token from `address`: the seconds it must now wait, 0 while under the limit. */
  async failed(address: string): Promise<number> {
    try {
      await this.#limiter.consume(address);
      return 0;
    } catch (error) {
      if (error instanceof RateLimiterRes) return secondsOf(error);
      throw error;
    }
  }
}

const secondsOf = (state: RateLimiterRes): number =>
  Math.max(1, Math.ceil(state.msBeforeNext / 1000));
