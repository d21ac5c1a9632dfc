/** A model's limits (`AgentConfig.rateLimit`). */
export interface ModelRateLimit {
  requestsPerMinute?: number | undefined;
  tokensPerMinute?: number | undefined;
}

/** A request's answer from `ModelLimiter.take`. */
export interface Admission {
  /** True: the request is counted and goes once `waitMs` is over; false: ask again then. */
  admitted: boolean;
  waitMs: number;
}

/**
 * The limits on a model's calls that every process of a backend shares (Redis: kept in Redis;
 * memory: in this process), keyed by provider name and model. Built on rate-limiter-flexible.
 */
export interface ModelLimiter {
  /**
   * Asks for a place for one request of `key` within `horizonMs`: requests go evenly spaced
   * over the minute (300 a minute: one every 200 ms), so a place may be a little ahead. When
   * one is free the request is counted (`admitted`) and goes after `waitMs`; otherwise
   * `waitMs` says when to ask again (the model is paused, its token budget for the minute is
   * spent, or every place within the horizon is taken).
   */
  take(key: string, limit: ModelRateLimit | undefined, horizonMs: number): Promise<Admission>;
  /** Pauses `key`'s calls in every process for `ms` (a provider said `rate_limited`). */
  pause(key: string, ms: number): Promise<void>;
  /** Counts the tokens a call of `key` used against its `tokensPerMinute`. */
  spend(key: string, tokens: number, limit: ModelRateLimit | undefined): Promise<void>;
}
