import { finishedLua } from "./redis-index-lua.js";
import { LuaScript } from "./redis-scripts.js";
import { dropRunLua, unlinkLua } from "./redis-tree-lua.js";

// Deleting a run, in one script: its hash, its index entries, its other keys, and its place in
// its tree (its link, its field in its parent's run hash, and its entry in its root's
// `treeDeep`), with its children no run of which is stored (a turn a crash cut short recorded
// them: nothing else would drop them). The tree's fields of its own hash, and its own
// `treeDeep`, stay while runs below it do: each removes itself as it goes.

/**
 * The KEYS after the run and the finished set: ARGV[2] index keys, ARGV[3] tree keys
 * (`DeletedPlace.keys`: the holders of the run, where its field is ARGV[4], ARGV[5] of them;
 * its root's `treeDeep` when ARGV[6] is "1"; then each child's link and run hash, the child's
 * id and field being ARGV[7], ARGV[8], …), then the keys to delete. Lua: drops ARGV[1] from
 * the indexes, the finished set and the tree, drops the children not stored, and deletes the
 * keys and `KEYS[1]` (`dropRun`).
 */
const DELETE_KEYS_LUA = `
${unlinkLua}
${dropRunLua}
local indexes = tonumber(ARGV[2])
local trees = tonumber(ARGV[3])
local holders = tonumber(ARGV[5])
for at = 2, 2 + indexes do redis.call("ZREM", KEYS[at], ARGV[1]) end
local at = 3 + indexes
if holders >= 1 then unlinkFrom(KEYS[at], ARGV[4]) end
if holders >= 2 then redis.call("SREM", KEYS[at + 1], ARGV[1]) end
at = at + holders
local deep = false
if ARGV[6] == "1" then
  deep = KEYS[at]
  at = at + 1
end
for child = 7, #ARGV, 2 do
  if redis.call("HEXISTS", KEYS[at + 1], "record") == 0 then
    redis.call("DEL", KEYS[at])
    unlinkFrom(KEYS[1], ARGV[child + 1])
    if deep then redis.call("SREM", deep, ARGV[child]) end
  end
  at = at + 2
end
for key = 3 + indexes + trees, #KEYS do redis.call("DEL", KEYS[key]) end
dropRun(KEYS[1])
`;

/**
 * KEYS: run, finished set, then the rest as `DELETE_KEYS_LUA` reads them. ARGV: run id, how
 * many index keys, then `DeletedPlace.argv`. Deletes a finished run (0 when it is not finished,
 * or gone).
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
