import type { Cluster as IoCluster, Redis as IoRedis } from "ioredis";
import { type LazyPackage, lazyValue, requireOptional } from "../core/optional-dependency.js";

/** The Redis client: only a Redis backend (or the doctor) needs it, so it loads on first use. */
export const IOREDIS: LazyPackage = {
  feature: "redisBackend",
  packages: [{ name: "ioredis", range: "^5.11.1" }],
};

type IoRedisModule = typeof import("ioredis");
const ioredis = () => requireOptional<IoRedisModule>(IOREDIS);

/**
 * ioredis's `Redis`, loaded when the first client is made or an `instanceof` asks: import it
 * from here, not from "ioredis", so that `import "harnessx"` does not load ioredis (SPEC §15).
 */
export const Redis: typeof IoRedis = lazyValue(() => ioredis().Redis);
export type Redis = IoRedis;

/** ioredis's `Cluster`, loaded as `Redis` is. */
export const Cluster: typeof IoCluster = lazyValue(() => ioredis().Cluster);
export type Cluster = IoCluster;
