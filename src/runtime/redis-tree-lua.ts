// The run tree's Lua (see `redisKeys`: `treeLink`, `treeBelow`), shared by the run tree's own
// scripts and the run store's deletions. On a Cluster every key of a prefix shares its hash slot
// (the prefix is a hash tag), so each script touches keys of one slot.

/** The state of a run in the `treeBelow` hash of its parent: running, finished. */
export const CHILD_RUNNING = "1";
export const CHILD_FINISHED = "0";
/** The state of a run of depth 2 or more in its root's `treeBelow` hash. */
export const DESCENDANT = "d";
/** The `treeBelow` field counting the running children ("" is never a run id). */
export const RUNNING_COUNT = "";

/**
 * A Lua function `unlinkFrom(key, id)`: removes run `id` from the `treeBelow` hash `key`,
 * uncounting it if it ran (the hash goes with its last field, as Redis deletes an empty hash).
 */
export const unlinkLua = `
local function unlinkFrom(key, id)
  local state = redis.call("HGET", key, id)
  if state == false then return end
  redis.call("HDEL", key, id)
  if state == "${CHILD_RUNNING}" and redis.call("HINCRBY", key, "${RUNNING_COUNT}", -1) <= 0 then
    redis.call("HDEL", key, "${RUNNING_COUNT}")
  end
end
`;

/**
 * KEYS: the child's link, its parent's `treeBelow`, its root's (the parent's again for a child
 * of a root). ARGV: the link's JSON, the child's id. Returns 1 when it linked the child, 0 when
 * it was linked before (nothing changes then).
 */
export const LINK_CHILD_LUA = `
if redis.call("SET", KEYS[1], ARGV[1], "NX") == false then return 0 end
redis.call("HSET", KEYS[2], ARGV[2], "${CHILD_RUNNING}")
redis.call("HINCRBY", KEYS[2], "${RUNNING_COUNT}", 1)
if KEYS[3] ~= KEYS[2] then redis.call("HSET", KEYS[3], ARGV[2], "${DESCENDANT}") end
return 1
`;

/**
 * KEYS: the parent's `treeBelow`. ARGV: the child's id. Marks the child finished; returns 1
 * when no child of the parent runs any more. One key only: atomic wherever the parent's key
 * lives.
 */
export const CHILD_FINISHED_LUA = `
if redis.call("HGET", KEYS[1], ARGV[1]) == "${CHILD_RUNNING}" then
  redis.call("HSET", KEYS[1], ARGV[1], "${CHILD_FINISHED}")
  if redis.call("HINCRBY", KEYS[1], "${RUNNING_COUNT}", -1) > 0 then return 0 end
  redis.call("HDEL", KEYS[1], "${RUNNING_COUNT}")
  return 1
end
if redis.call("HEXISTS", KEYS[1], "${RUNNING_COUNT}") == 1 then return 0 end
return 1
`;
