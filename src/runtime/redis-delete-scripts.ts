import { finishedLua } from "./redis-index-lua.js";
import { LuaScript } from "./redis-scripts.js";
import { dropRunLua, unlinkLua } from "./redis-tree-lua.js";

// Deleting a run, in one script: its hash, its index entries, its other keys, and its place in
// its tree (its link, its field in its parent's run hash, and its entry in its root's
// `treeDeep`). The tree's fields of its own hash, and its own `treeDeep`, stay while runs below
// it do: each removes itself as it goes.

/**
 * The KEYS after the run and the finished set: ARGV[2] index keys, ARGV[3] tree keys to remove
 * the run from (`TreePlace.holders`: its parent's run hash, where its field is ARGV[4], then
 * its root's `treeDeep`), then the keys to delete. Lua: drops ARGV[1] from the indexes, the
 * finished set and the tree, and deletes the keys and `KEYS[1]` (`dropRun`).
 */
const DELETE_KEYS_LUA = `
${unlinkLua}
${dropRunLua}
local indexes = tonumber(ARGV[2])
local trees = tonumber(ARGV[3])
for at = 2, 2 + indexes do redis.call("ZREM", KEYS[at], ARGV[1]) end
if trees >= 1 then unlinkFrom(KEYS[3 + indexes], ARGV[4]) end
if trees >= 2 then redis.call("SREM", KEYS[4 + indexes], ARGV[1]) end
for at = 3 + indexes + trees, #KEYS do redis.call("DEL", KEYS[at]) end
dropRun(KEYS[1])
`;

/**
 * KEYS: run, finished set, then the rest as `DELETE_KEYS_LUA` reads them. ARGV: run id, how
 * many index keys, how many tree keys, the run's field in its parent's hash. Deletes a finished
 * run (0 when it is not finished, or gone).
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
 * `RunStore.deleteRun`). Returns 1, or 0 when the run had no record.
 */
export const DELETE_RUN = new LuaScript(`
local existed = redis.call("HEXISTS", KEYS[1], "record")
${DELETE_KEYS_LUA}
return existed
`);
