import { LuaScript } from "./redis-scripts.js";

/**
 * KEYS: run, finished set, then ARGV[2] index keys, then the run's other keys.
 * ARGV: run id, how many index keys. Deletes a run whatever its status (one that cannot be
 * read, `RunStore.deleteRun`): drops it from the indexes and the finished set, and deletes its
 * keys. Returns 1, or 0 when the run had no hash.
 */
export const DELETE_RUN = new LuaScript(`
local existed = redis.call("EXISTS", KEYS[1])
local indexes = tonumber(ARGV[2])
for at = 2, 2 + indexes do redis.call("ZREM", KEYS[at], ARGV[1]) end
for at = 3 + indexes, #KEYS do redis.call("DEL", KEYS[at]) end
redis.call("DEL", KEYS[1])
return existed
`);
