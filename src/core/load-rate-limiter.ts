import type * as Flexible from "rate-limiter-flexible";
import { type LazyPackage, lazyValue, requireOptional } from "./optional-dependency.js";

/**
 * rate-limiter-flexible: the runtime's model limits and the dashboard's token guesses need it,
 * the package's import does not (its entry loads some thirty stores), so it loads on first use.
 */
export const RATE_LIMITER: LazyPackage = {
  feature: "Model rate limits and the dashboard",
  packages: [{ name: "rate-limiter-flexible", range: "^11.4.0" }],
};

const flexible = () => requireOptional<typeof Flexible>(RATE_LIMITER);

/** Import these from here, not from "rate-limiter-flexible": each loads it on first use. */
export const RateLimiterMemory: typeof Flexible.RateLimiterMemory = lazyValue(
  () => flexible().RateLimiterMemory,
);
export type RateLimiterMemory = Flexible.RateLimiterMemory;
export const RateLimiterRedis: typeof Flexible.RateLimiterRedis = lazyValue(
  () => flexible().RateLimiterRedis,
);
export type RateLimiterRedis = Flexible.RateLimiterRedis;
export const RateLimiterRes: typeof Flexible.RateLimiterRes = lazyValue(
  () => flexible().RateLimiterRes,
);
export type RateLimiterRes = Flexible.RateLimiterRes;
export type RateLimiterAbstract = Flexible.RateLimiterAbstract;
