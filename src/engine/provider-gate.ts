import type { ProviderError } from "../core/errors.js";
import type { ProviderRequest } from "../core/provider.js";
import type { ProviderResponse } from "../core/values.js";

/**
 * Not a failure: the run's model call waits for its rate limit, and the step ends without
 * saving anything more so that the run is stepped again in `delayMs` (from its last save; the
 * phases before the provider call are pure or middleware, which tolerates running again).
 */
export interface ProviderDeferral {
  readonly delayMs: number;
  /** Since when the call has been waiting (ms), carried by the next step. */
  readonly waitingSince: number;
}

/**
 * What the provider stage returns instead of a machine event when its call is deferred: the
 * drive loop stops there and hands the deferral to its caller, the machine hears nothing.
 */
export interface ProviderCallDeferred {
  readonly type: "PROVIDER_DEFERRED";
  readonly deferral: ProviderDeferral;
}

/**
 * What a durable runtime puts around each model call (`RunEnv.providerGate`): the shared rate
 * limit is taken before the request is recorded and sent, a `rate_limited` answer pauses the
 * model everywhere, and the tokens a call used are counted.
 */
export interface ProviderGate {
  /**
   * Resolves with nothing when the call may go, or with a deferral when the wait is long
   * enough that the run's step should give its worker slot back and come again later. Rejects
   * with a `ProviderError` ("rate_limited") once the run has waited `rateLimitWaitMs` in all.
   */
  admit(request: ProviderRequest, signal: AbortSignal): Promise<ProviderDeferral | undefined>;
  /**
   * The provider answered `rate_limited`: pauses the model and resolves with the deferral of
   * the call, or rejects as `admit` does once the wait budget is spent.
   */
  rateLimited(error: ProviderError): Promise<ProviderDeferral>;
  /** Counts what a call used. */
  spent(response: ProviderResponse): Promise<void>;
}
