import { finishedLua } from "./redis-index-lua.js";
import { LuaScript } from "./redis-scripts.js";
import { unlinkLua } from "./redis-tree-lua.js";

// Deleting a run, in one script: its hash, its index entries, its other keys, and its place in
// its tree (its link, and its entries in its parent's and root's `treeBelow` hashes). A run's own
// `treeBelow` stays while runs below it do: each removes itself from it as it goes.

/**
 * The KEYS after the run and the finished set: ARGV[2] index keys, ARGV[3] `treeBelow` hashes
 * to remove the run from, then the keys to delete. Lua: drops ARGV[1] from the indexes, the
 * finished set and the trees, and deletes the keys and `KEYS[1]`.
 */
const DELETE_KEYS_LUA = `
${unlinkLua}
local indexes = tonumber(ARGV[2])
local trees = tonumber(ARGV[3])
for at = 2, 2 + indexes do redis.call("ZREM", KEYS[at], ARGV[1]) end
for at = 3 + indexes, 2 + indexes + trees do unlinkFrom(KEYS[at], ARGV[1]) end
for at = 3 + indexes + trees, #KEYS do redis.call("DEL", KEYS[at]) end
redis.call("DEL", KEYS[1])
`;

/**
 * KEYS: run, finished set, then the rest as `DELETE_KEYS_LUA` reads them. ARGV: run id, how
 * many index keys, how many tree hashes. Deletes a finished run (0 when it is not finished, or
 * gone).
 */
export const PRUNE_RUN = new LuaScript(`
local status = redis.call("HGET", KEYS[1], "status")
if not ${finishedLua("status")} then
  redis.call("ZREM", KEYS[2], ARGV[1])
  return 0
end
${DELETE_KEYS_LUA}
return 1
`);

/**
 * KEYS and ARGV as `PRUNE_RUN`'s. Deletes a run whatever its status (one that cannot be read,
 * `RunStore.deleteRun`). Returns 1, or 0 when the run had no hash.
 */
export const DELETE_RUN = new LuaScript(`
local existed = redis.call("EXISTS", KEYS[1])
${DELETE_KEYS_LUA}
return existed
`);
