import { pushArgvLua } from "./redis-index-lua.js";
import { appendEventsLua } from "./redis-scripts.js";

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
 * The Lua block placing the child ARGV[at + 1] (link JSON ARGV[at]) at link key `link` unless
 * stored (the local `linked` is 1 when it stored it), in its root's hash `root` as a deeper run
 * (when not the parent's `below`), and running in its parent's `below` unless the parent holds
 * it, or, with `again`, unless it runs there (the local `counted` is 1 when it counted it).
 */
const placeChildLua = (link: string, below: string, root: string, at: string, again: boolean) => `
linked = 0
counted = 0
if redis.call("SET", ${link}, ARGV[${at}], "NX") then linked = 1 end
local state = redis.call("HGET", ${below}, ARGV[${at} + 1])
if state == false${again ? ` or state == "${CHILD_FINISHED}"` : ""} then
  redis.call("HSET", ${below}, ARGV[${at} + 1], "${CHILD_RUNNING}")
  counted = 1
end
if ${root} ~= ${below} then redis.call("HSETNX", ${root}, ARGV[${at} + 1], "${DESCENDANT}") end
`;

/**
 * KEYS: the child's link, its parent's `treeBelow`, its root's (the parent's again for a child
 * of a root). ARGV: the link's JSON, the child's id. Counts the child running unless its parent
 * holds it (running or finished). Returns 1 when it stored the link, 0 when it was there.
 */
export const LINK_CHILD_LUA = `
local linked, counted
${placeChildLua("KEYS[1]", "KEYS[2]", "KEYS[3]", "1", false)}
if counted == 1 then redis.call("HINCRBY", KEYS[2], "${RUNNING_COUNT}", 1) end
return linked
`;

/**
 * KEYS: the parent's run hash, its `treeBelow`, its root's, then each child's link. ARGV: the
 * parent's lease token, then each child's link JSON and id. Refused (-1) unless the token is the
 * parent's newest (its hash's `fence`, as SAVE_RUN checks it); else what the parent waited for
 * before stops counting (running children turn finished), and these children are placed and
 * become exactly the running ones. Returns how many run.
 */
export const WAIT_FOR_CHILDREN_LUA = `
if redis.call("HGET", KEYS[1], "fence") ~= ARGV[1] then return -1 end
local below = redis.call("HGETALL", KEYS[2])
for at = 1, #below, 2 do
  if below[at] ~= "${RUNNING_COUNT}" and below[at + 1] == "${CHILD_RUNNING}" then
    redis.call("HSET", KEYS[2], below[at], "${CHILD_FINISHED}")
  end
end
redis.call("HDEL", KEYS[2], "${RUNNING_COUNT}")
local running = 0
local linked, counted
for index = 4, #KEYS do
  local at = 2 + (index - 4) * 2
  ${placeChildLua("KEYS[index]", "KEYS[2]", "KEYS[3]", "at", true)}
  running = running + counted
end
if running > 0 then redis.call("HSET", KEYS[2], "${RUNNING_COUNT}", running) end
return running
`;

/**
 * KEYS: the parent's `treeBelow`. ARGV: the child's id. A running child leaves the hash (a
 * call that did not start its child): it no longer counts, and linking it again counts it.
 */
export const RELEASE_CHILD_LUA = `
if redis.call("HGET", KEYS[1], ARGV[1]) ~= "${CHILD_RUNNING}" then return 0 end
redis.call("HDEL", KEYS[1], ARGV[1])
if redis.call("HINCRBY", KEYS[1], "${RUNNING_COUNT}", -1) <= 0 then
  redis.call("HDEL", KEYS[1], "${RUNNING_COUNT}")
end
return 1
`;

/**
 * The Lua block ending a script: marks the child `id` finished in its parent's `below` hash,
 * and returns 1 when no child of the parent runs any more, else 0.
 */
const childFinishedLua = (below: string, id: string) => `
if redis.call("HGET", ${below}, ${id}) == "${CHILD_RUNNING}" then
  redis.call("HSET", ${below}, ${id}, "${CHILD_FINISHED}")
  if redis.call("HINCRBY", ${below}, "${RUNNING_COUNT}", -1) > 0 then return 0 end
  redis.call("HDEL", ${below}, "${RUNNING_COUNT}")
  return 1
end
if redis.call("HEXISTS", ${below}, "${RUNNING_COUNT}") == 1 then return 0 end
return 1
`;

/**
 * KEYS: the parent's `treeBelow`. ARGV: the child's id. Marks the child finished; returns 1
 * when no child of the parent runs any more. One key only: atomic wherever the parent's key
 * lives.
 */
export const CHILD_FINISHED_LUA = childFinishedLua("KEYS[1]", "ARGV[1]");

/**
 * A child's finish in one write, instead of COMMIT_RAW then CHILD_FINISHED (one round trip and
 * one script a child fewer). KEYS: the parent's raw results (the call's iteration), events, run
 * hash and `treeBelow`: the parent's keys only, so the commit and the wake-up decision stay one
 * atomic write wherever the parent's keys live, whatever slot the child's are in. ARGV: the
 * call's field, the result's JSON, max events, the child's id, then each event's JSON. Commits
 * the result unless one is (first write wins) and appends the events whether or not it did,
 * as COMMIT_RAW does; then CHILD_FINISHED_LUA's answer.
 */
export const FINISH_CHILD_LUA = `
${pushArgvLua}
redis.call("HSETNX", KEYS[1], ARGV[1], ARGV[2])
${appendEventsLua("KEYS[2]", "KEYS[3]", "ARGV[3]", 5, 'redis.call("HGET", KEYS[3], "etrim")')}
${childFinishedLua("KEYS[4]", "ARGV[4]")}
`;
