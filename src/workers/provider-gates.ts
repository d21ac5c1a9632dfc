import { setTimeout as sleep } from "node:timers/promises";
import type { Clock } from "../core/deps.js";
import { ProviderError, RunCancelledError } from "../core/errors.js";
import type { ProviderRequest } from "../core/provider.js";
import type { ProviderResponse } from "../core/values.js";
import type { ProviderDeferral, ProviderGate } from "../engine/provider-gate.js";
import type { RunEnv } from "../engine/run-env.js";
import type { ModelLimiter, ModelRateLimit } from "../store/model-limiter.js";

/**
 * Waits up to this long for a model's rate limit while holding the step's worker slot; a
 * longer wait gives the slot back (the step is queued again, delayed). A step waiting in
 * process costs no CPU but holds a slot that runs of other models could use.
 */
const MAX_INLINE_WAIT_MS = 2000;
/** How long a model is paused after `rate_limited` without `retryAfterMs`. */
const DEFAULT_RETRY_AFTER_MS = 1000;

/**
 * The provider gates of one worker process: shared rate limits around each model call of a
 * durable run (see `ProviderGate`).
 *
 * Waiting: a call is admitted up to `MAX_INLINE_WAIT_MS` ahead of its place in the model's
 * even spacing, and its step sleeps until then. A step whose call must wait briefly for a place
 * (at most `MAX_INLINE_WAIT_MS`, and only as many steps as the limit can admit meanwhile)
 * sleeps and asks again. Any other step is deferred:
 * it ends without saving and its run is queued again, delayed to this process's next free
 * slot of the model's rate (so that deferred steps come back spread out, not as a herd). A
 * deferred step costs one more lease, restore and compose when it comes back; a waiting one
 * would hold a worker slot for as long as the queue ahead of it.
 */
export class ProviderGates {
  readonly #shared: SharedGates;

  constructor(limiter: ModelLimiter, clock: Clock) {
    this.#shared = { limiter, clock, sleeping: new Map(), nextSlot: new Map() };
  }

  /** The gate of one step's model calls; `rateLimitedSince` carries an earlier step's wait. */
  forStep(env: RunEnv, rateLimitedSince: number | undefined): ProviderGate {
    return new StepGate(this.#shared, env, rateLimitedSince);
  }
}

/** What the gates of one process share. */
interface SharedGates {
  readonly limiter: ModelLimiter;
  readonly clock: Clock;
  /** Steps of this process sleeping on each model's limit. */
  readonly sleeping: Map<string, number>;
  /** This process's next free slot (ms) for a deferred step of each model. */
  readonly nextSlot: Map<string, number>;
}

/**
 * The gate of one step's model calls. One object, not a closure per method: a step held at its
 * model call keeps its gate alive while it waits.
 */
class StepGate implements ProviderGate {
  readonly #shared: SharedGates;
  readonly #env: RunEnv;
  readonly #key: string;
  #since: number | undefined;

  constructor(shared: SharedGates, env: RunEnv, rateLimitedSince: number | undefined) {
    this.#shared = shared;
    this.#env = env;
    this.#key = `${env.provider?.name ?? "?"}:${env.config.model}`;
    this.#since = rateLimitedSince;
  }

  async admit(
    _request: ProviderRequest,
    signal: AbortSignal,
  ): Promise<ProviderDeferral | undefined> {
    const key = this.#key;
    const limit = this.#env.config.rateLimit;
    for (;;) {
      const { admitted, waitMs } = await this.#shared.limiter.take(key, limit, MAX_INLINE_WAIT_MS);
      // Counted: the call goes at its place in the model's even spacing.
      if (admitted) {
        if (waitMs > 0) await waitFor(waitMs, signal);
        return undefined;
      }
      const now = this.#shared.clock.now();
      this.#checkBudget(now, waitMs);
      if (waitMs > MAX_INLINE_WAIT_MS || this.#asleep() >= inlineRoom(limit)) {
        return { delayMs: this.#deferral(now, waitMs), waitingSince: this.#since ?? now };
      }
      await this.#sleep(waitMs, signal);
    }
  }

  async rateLimited(error: ProviderError): Promise<ProviderDeferral> {
    const pauseMs = Math.max(1, retryAfterOf(error) ?? DEFAULT_RETRY_AFTER_MS);
    await this.#shared.limiter.pause(this.#key, pauseMs);
    const now = this.#shared.clock.now();
    this.#checkBudget(now, pauseMs);
    return { delayMs: this.#deferral(now, pauseMs), waitingSince: this.#since ?? now };
  }

  async spent(response: ProviderResponse): Promise<void> {
    const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = response.usage;
    const tokens = inputTokens + outputTokens + cacheReadTokens + cacheWriteTokens;
    await this.#shared.limiter.spend(this.#key, tokens, this.#env.config.rateLimit);
  }

  /** Fails the run once its call has waited `rateLimitWaitMs` in all. */
  #checkBudget(now: number, waitMs: number): void {
    this.#since ??= now;
    const budget = this.#env.config.rateLimitWaitMs;
    if (now + waitMs - this.#since > budget) {
      throw new ProviderError(
        `Model "${this.#key}" stayed rate limited for longer than config.rateLimitWaitMs (${budget} ms).`,
        { code: "rate_limited", retryable: false, phase: "provider" },
      );
    }
  }

  #asleep(): number {
    return this.#shared.sleeping.get(this.#key) ?? 0;
  }

  async #sleep(ms: number, signal: AbortSignal): Promise<void> {
    const { sleeping } = this.#shared;
    const key = this.#key;
    sleeping.set(key, this.#asleep() + 1);
    try {
      await waitFor(ms, signal);
    } finally {
      const left = this.#asleep() - 1;
      if (left === 0) sleeping.delete(key);
      else sleeping.set(key, left);
    }
  }

  /** How long to defer a step: to this process's next free slot of the model, jittered. */
  #deferral(now: number, waitMs: number): number {
    const limit = this.#env.config.rateLimit;
    const { nextSlot } = this.#shared;
    const spacing =
      limit?.requestsPerMinute === undefined ? 0 : Math.ceil(60_000 / limit.requestsPerMinute);
    const slot = Math.max(now + waitMs, nextSlot.get(this.#key) ?? 0);
    nextSlot.set(this.#key, slot + spacing);
    return slot - now + Math.floor(Math.random() * Math.max(spacing, 100));
  }
}

/** Waits `ms`; a cancelled run stops waiting. */
async function waitFor(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (error) {
    if (signal.aborted) throw new RunCancelledError("provider", error);
    throw error;
  }
}

/** How many steps may sleep on a limit at once: as many as it admits within the inline wait. */
function inlineRoom(limit: ModelRateLimit | undefined): number {
  if (limit?.requestsPerMinute === undefined) return 0;
  return Math.ceil((limit.requestsPerMinute * MAX_INLINE_WAIT_MS) / 60_000);
}

/** `retryAfterMs` of a provider error of any copy of the package. */
function retryAfterOf(error: ProviderError): number | undefined {
  const value: unknown = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
