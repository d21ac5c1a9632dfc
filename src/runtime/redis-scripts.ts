import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/** A Lua script run by its SHA, loaded on first use (and again after a server restart). */
export class LuaScript {
  readonly #lua: string;
  readonly #sha: string;

  constructor(lua: string) {
    this.#lua = lua;
    this.#sha = createHash("sha1").update(lua).digest("hex");
  }

  async run(
    redis: Redis,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.#sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return redis.eval(this.#lua, keys.length, ...keys, ...args);
    }
  }
}

/**
 * KEYS: lease, fence, wake. ARGV: ttlMs.
 * Free: a new fencing token (INCR) holds the lease. Held: leave a wake-up for the holder.
 * Returns {1, token} or {0, remaining ms}.
 */
export const ACQUIRE_LEASE = new LuaScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then
  redis.call("SET", KEYS[3], "1")
  return {0, redis.call("PTTL", KEYS[1])}
end
local token = redis.call("INCR", KEYS[2])
redis.call("SET", KEYS[1], token, "PX", ARGV[1])
redis.call("DEL", KEYS[3])
return {1, token}
`);

/** KEYS: lease. ARGV: token, ttlMs. Returns 1 when the lease was still ours and is extended. */
export const RENEW_LEASE = new LuaScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
return 0
`);

/**
 * KEYS: lease, wake. ARGV: token.
 * Drops the lease if still ours; returns 1 when a wake-up was left meanwhile (and takes it).
 */
export const RELEASE_LEASE = new LuaScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
end
if redis.call("DEL", KEYS[2]) == 1 then return 1 end
return 0
`);

/**
 * KEYS: run, fence, cancel, lease.
 * ARGV: token, record JSON, new status, createdAt, runId, ttlMs, status-set key prefix.
 * Fenced write: refused (-1) unless `token` is the newest issued. Moves the run between status
 * sets (keys built from the prefix: a standalone-Redis script), extends the lease, and returns
 * 1 when a cancel was requested, else 0.
 */
export const SAVE_RUN = new LuaScript(`
if redis.call("GET", KEYS[2]) ~= ARGV[1] then return -1 end
local old = redis.call("HGET", KEYS[1], "status")
redis.call("HSET", KEYS[1], "record", ARGV[2], "status", ARGV[3])
if old and old ~= ARGV[3] then redis.call("ZREM", ARGV[7] .. old, ARGV[5]) end
redis.call("ZADD", ARGV[7] .. ARGV[3], ARGV[4], ARGV[5])
if redis.call("GET", KEYS[4]) == ARGV[1] then redis.call("PEXPIRE", KEYS[4], ARGV[6]) end
return redis.call("EXISTS", KEYS[3])
`);

/** KEYS: run, status set. ARGV: record JSON, status, createdAt, runId. 0 when the run exists. */
export const CREATE_RUN = new LuaScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
redis.call("HSET", KEYS[1], "record", ARGV[1], "status", ARGV[2])
redis.call("ZADD", KEYS[2], ARGV[3], ARGV[4])
return 1
`);
