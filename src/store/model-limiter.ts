/** A model's limits (`AgentConfig.rateLimit`). */
export interface ModelRateLimit {
  requestsPerMinute?: number | undefined;
  tokensPerMinute?: number | undefined;
}

/**
 * The limits on a model's calls that every process of a backend shares (Redis: kept in Redis;
 * memory: in this process), keyed by provider name and model. Built on rate-limiter-flexible.
 */
export interface ModelLimiter {
  /**
   * Takes one request from `key`'s budget when its calls may go now: 0. Otherwise how many
   * milliseconds to wait before asking again (the model is paused, its token budget for the
   * minute is spent, or this window's requests are taken).
   */
  take(key: string, limit: ModelRateLimit | undefined): Promise<number>;
  /** Pauses `key`'s calls in every process for `ms` (a provider said `rate_limited`). */
  pause(key: string, ms: number): Promise<void>;
  /** Counts the tokens a call of `key` used against its `tokensPerMinute`. */
  spend(key: string, tokens: number, limit: ModelRateLimit | undefined): Promise<void>;
}
