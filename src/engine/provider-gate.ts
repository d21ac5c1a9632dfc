import type { ProviderError } from "../core/errors.js";
import type { ProviderRequest } from "../core/provider.js";
import type { ProviderResponse } from "../core/values.js";

/**
 * What a durable runtime puts around each model call (`RunEnv.providerGate`): the shared rate
 * limit is taken before the request is recorded and sent, a `rate_limited` answer pauses the
 * model everywhere, and the tokens a call used are counted.
 */
export interface ProviderGate {
  /**
   * Resolves when the call may go. Throws `ProviderCallDeferred` when the wait is long enough
   * that the run's step should give its worker slot back and come again later, or a
   * `ProviderError` ("rate_limited") once the run has waited `rateLimitWaitMs` in all.
   */
  admit(request: ProviderRequest, signal: AbortSignal): Promise<void>;
  /** The provider answered `rate_limited`: pauses the model and throws what `admit` throws. */
  rateLimited(error: ProviderError): Promise<never>;
  /** Counts what a call used. */
  spent(response: ProviderResponse): Promise<void>;
}

/**
 * Not a failure: the run's model call waits for its rate limit, and the step ends without
 * saving anything so that the run is stepped again in `delayMs` (from its last save; the
 * phases before the provider call are pure or middleware, which tolerates running again).
 */
export class ProviderCallDeferred extends Error {
  override name = "ProviderCallDeferred";
  readonly delayMs: number;
  /** Since when the call has been waiting (ms), carried by the next step. */
  readonly waitingSince: number;

  constructor(delayMs: number, waitingSince: number) {
    super(`The model call waits ${delayMs} ms for its rate limit.`);
    this.delayMs = delayMs;
    this.waitingSince = waitingSince;
  }
}
