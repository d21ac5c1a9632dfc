import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from "../core/load-rate-limiter.js";
import type { Admission, ModelLimiter, ModelRateLimit } from "../store/model-limiter.js";
import type { PauseWatch } from "./model-pauses.js";
import type { RedisClient } from "./redis-connection.js";

/** What a rate-limiter-flexible limiter is made of; the store is the backend's. */
interface LimiterShape {
  keyPrefix: string;
  points: number;
  /** Seconds (whole: Redis expires rate-limiter-flexible's keys by the second). */
  duration: number;
}

type LimiterFactory = (shape: LimiterShape) => RateLimiterAbstract;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * A per-minute request limit as the smallest whole-second window that holds a whole number of
 * requests: 600/min is 10 per 1 s window, 50/min is 5 per 6 s, 7/min is 7 per 60 s, so that no
 * share is lost to rounding. Within a window the requests go evenly spaced (see `placeOf`).
 */
export function requestWindow(requestsPerMinute: number): { points: number; duration: number } {
  const duration = 60 / gcd(requestsPerMinute, 60);
  return { points: (requestsPerMinute * duration) / 60, duration };
}

/**
 * Where the `nth` request of a window goes, in ms from now, given the window's `msBeforeNext`:
 * `n - 1` spacings (60 s / requestsPerMinute) after the window's start. The count is shared by
 * every process, so their requests interleave evenly: 300/min is one every 200 ms, never 5 at
 * once. Queued requests take their places ahead and go on time; a request that finds its place
 * gone by goes at once, at most one spacing late (so at most one more in a second than the
 * per-second rate, and only after a lull).
 */
function placeOf(
  nth: number,
  msBeforeNext: number,
  window: { points: number; duration: number },
): number {
  const durationMs = window.duration * 1000;
  return msBeforeNext - durationMs + ((nth - 1) * durationMs) / window.points;
}

/**
 * Model limits on rate-limiter-flexible limiters, one per shape, all under `prefix`: fixed
 * windows of requests (`requestWindow`) whose places are spaced evenly (`placeOf`), one-minute
 * windows of tokens, and pauses (a key blocked for the pause's whole seconds).
 */
class FlexibleModelLimiter implements ModelLimiter {
  readonly #create: LimiterFactory;
  readonly #prefix: string;
  readonly #limiters = new Map<string, RateLimiterAbstract>();
  /** Pauses known in this process (Redis): no read of the pause before every call. */
  readonly #watch: PauseWatch | undefined;

  constructor(prefix: string, create: LimiterFactory, watch?: PauseWatch) {
    this.#prefix = prefix;
    this.#create = create;
    this.#watch = watch;
  }

  async take(
    key: string,
    limit: ModelRateLimit | undefined,
    horizonMs: number,
  ): Promise<Admission> {
    const rpm = limit?.requestsPerMinute;
    const readPause = () => this.#pausedMs(key);
    const [pausedMs, tokens, requests] = await Promise.all([
      this.#watch === undefined ? readPause() : this.#watch.remainingMs(key, readPause),
      limit?.tokensPerMinute === undefined ? null : this.#tokens(limit.tokensPerMinute).get(key),
      rpm === undefined ? null : this.#requests(rpm).get(key),
    ]);
    const later = (ms: number): Admission => ({ admitted: false, waitMs: Math.max(1, ms) });
    if (pausedMs > 0) return later(pausedMs);
    if (tokens !== null && limit?.tokensPerMinute !== undefined) {
      if (tokens.consumedPoints >= limit.tokensPerMinute) return later(tokens.msBeforeNext);
    }
    if (rpm === undefined) return { admitted: true, waitMs: 0 };
    const window = requestWindow(rpm);
    let missed = 0;
    if (requests !== null && requests.consumedPoints > 0) {
      if (requests.consumedPoints >= window.points) return later(requests.msBeforeNext);
      // The next free place is beyond the horizon: ask again once it is within it.
      const next = placeOf(requests.consumedPoints + 1, requests.msBeforeNext, window);
      if (next > horizonMs) return later(next - horizonMs);
      // Places that went by unused stay unused: this request takes the place of now, so that
      // the requests after it keep their spacing instead of catching up in a burst.
      missed = Math.max(0, Math.floor(-next / ((window.duration * 1000) / window.points)));
    }
    try {
      const taken = await this.#requests(rpm).consume(key, 1 + missed);
      const waitMs = placeOf(taken.consumedPoints, taken.msBeforeNext, window);
      return { admitted: true, waitMs: Math.max(0, Math.ceil(waitMs)) };
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return later(refusal.msBeforeNext);
      throw refusal;
    }
  }

  async pause(key: string, ms: number): Promise<void> {
    // Whole seconds, rounded up: a block of 0 s would never expire in Redis.
    const seconds = Math.max(1, Math.ceil(ms / 1000));
    await this.#pauses().block(key, seconds);
    await this.#watch?.announce(key, seconds * 1000);
  }

  /** How long `key` stays paused, as stored (0: not paused). */
  async #pausedMs(key: string): Promise<number> {
    const paused = await this.#pauses().get(key);
    return paused !== null && paused.consumedPoints > 1 ? Math.max(1, paused.msBeforeNext) : 0;
  }

  async spend(key: string, tokens: number, limit: ModelRateLimit | undefined): Promise<void> {
    if (limit?.tokensPerMinute === undefined || tokens <= 0) return;
    await this.#tokens(limit.tokensPerMinute).penalty(key, Math.ceil(tokens));
  }

  #requests(requestsPerMinute: number): RateLimiterAbstract {
    const window = requestWindow(requestsPerMinute);
    return this.#limiter({ keyPrefix: `${this.#prefix}:rl:req:${requestsPerMinute}`, ...window });
  }

  #tokens(tokensPerMinute: number): RateLimiterAbstract {
    return this.#limiter({
      keyPrefix: `${this.#prefix}:rl:tok:${tokensPerMinute}`,
      points: tokensPerMinute,
      duration: 60,
    });
  }

  #pauses(): RateLimiterAbstract {
    return this.#limiter({ keyPrefix: `${this.#prefix}:rl:pause`, points: 1, duration: 1 });
  }

  #limiter(shape: LimiterShape): RateLimiterAbstract {
    let limiter = this.#limiters.get(shape.keyPrefix);
    if (limiter === undefined) {
      limiter = this.#create(shape);
      this.#limiters.set(shape.keyPrefix, limiter);
    }
    return limiter;
  }
}

/**
 * Model limits kept in Redis (`RateLimiterRedis` on the backend's connection): shared by every
 * process. On a cluster the prefix's hash tag puts every limiter key in the backend's slot.
 * With `watch`, pauses are known from its announcements instead of read before every call.
 */
export function redisModelLimiter(
  redis: RedisClient,
  prefix: string,
  watch?: PauseWatch,
): ModelLimiter {
  return new FlexibleModelLimiter(
    prefix,
    (shape) => new RateLimiterRedis({ storeClient: redis, ...shape }),
    watch,
  );
}

/** Model limits in this process (`RateLimiterMemory`): the embedded backend's. */
export function memoryModelLimiter(): ModelLimiter {
  return new FlexibleModelLimiter("hx", (shape) => new RateLimiterMemory(shape));
}
