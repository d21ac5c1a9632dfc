import {
  CHILD_FINISHED,
  CHILD_RELEASED,
  CHILD_RUNNING,
  isChildFieldLua,
  isTreeFieldLua,
  RUNNING_COUNT,
} from "./redis/tree-fields.js";
import { pushArgvLua } from "./redis-index-lua.js";
import { appendEventsLua } from "./redis-scripts.js";

// The run tree's Lua (see `redisKeys`: `treeLink`, `treeDeep`, and the tree's fields of a run
// hash, redis/tree-fields.ts), shared by the run tree's own scripts and the run store's
// deletions. On a Cluster every key of a prefix shares its hash slot (the prefix is a hash tag),
// so each script touches keys of one slot.

/**
 * A Lua function `unlinkFrom(key, field)`: removes the child `field` from the run hash `key`,
 * uncounting it if it ran (the hash goes with its last field, as Redis deletes an empty hash).
 */
export const unlinkLua = `
local function unlinkFrom(key, field)
  local state = redis.call("HGET", key, field)
  if state == false then return end
  redis.call("HDEL", key, field)
  if state == "${CHILD_RUNNING}" and redis.call("HINCRBY", key, "${RUNNING_COUNT}", -1) <= 0 then
    redis.call("HDEL", key, "${RUNNING_COUNT}")
  end
end
`;

/**
 * A Lua function `dropRun(key)`: deletes the run hash `key`, but for the tree's fields while it
 * has children (they still list under it, and their finishes and deletions find them there).
 */
export const dropRunLua = `
local function dropRun(key)
  local own = {}
  local tree = false
  for _, field in ipairs(redis.call("HKEYS", key)) do
    if ${isTreeFieldLua("field")} then tree = true else own[#own + 1] = field end
  end
  if not tree then
    redis.call("DEL", key)
    return
  end
  for at = 1, #own, 100 do
    redis.call("HDEL", key, unpack(own, at, math.min(at + 99, #own)))
  end
end
`;

/**
 * The Lua block placing the child ARGV[at + 2] (link JSON ARGV[at], field ARGV[at + 1]) at link
 * key `link` unless stored (the local `linked` is 1 when it stored it), in its root's set `deep`
 * when `isDeep` (a Lua condition: its parent is not its root), and running in its parent's run
 * hash `run` unless the parent holds it (released, it counts again), or, with `again`, unless
 * it runs there (the local `counted` is 1 when it counted it).
 */
const placeChildLua = (
  link: string,
  run: string,
  deep: string,
  isDeep: string,
  at: string,
  again: boolean,
) => `
linked = 0
counted = 0
if redis.call("SET", ${link}, ARGV[${at}], "NX") then linked = 1 end
local state = redis.call("HGET", ${run}, ARGV[${at} + 1])
if state == false or state == "${CHILD_RELEASED}"${again ? ` or state == "${CHILD_FINISHED}"` : ""} then
  redis.call("HSET", ${run}, ARGV[${at} + 1], "${CHILD_RUNNING}")
  counted = 1
end
if ${isDeep} then redis.call("SADD", ${deep}, ARGV[${at} + 2]) end
`;

/**
 * KEYS: the child's link, its parent's run hash, its root's `treeDeep`. ARGV: the link's JSON,
 * the child's field, its id, "1" when its parent is not its root (else ""). Counts the child
 * running unless its parent holds it (running or finished). Returns 1 when it stored the link,
 * 0 when it was there.
 */
export const LINK_CHILD_LUA = `
local linked, counted
${placeChildLua("KEYS[1]", "KEYS[2]", "KEYS[3]", 'ARGV[4] == "1"', "1", false)}
if counted == 1 then redis.call("HINCRBY", KEYS[2], "${RUNNING_COUNT}", 1) end
return linked
`;

/**
 * KEYS: the parent's run hash, its root's `treeDeep`, then each child's link. ARGV: the
 * parent's lease token, "1" when the parent is not the root (else ""), then each child's link
 * JSON, field and id. Refused (-1) unless the token is the parent's newest (its hash's `fence`,
 * as SAVE_RUN checks it); else what the parent waited for before stops counting (running
 * children turn finished), and these children are placed and become exactly the running ones.
 * Returns the fields of the children it so replaced (ran before, not among these: a turn a
 * crash cut short recorded them, and nothing starts them now), for DROP_REPLACED. The run
 * hash's field names are read (HKEYS), never its record.
 */
export const WAIT_FOR_CHILDREN_LUA = `
if redis.call("HGET", KEYS[1], "fence") ~= ARGV[1] then return -1 end
local before = {}
for _, field in ipairs(redis.call("HKEYS", KEYS[1])) do
  if ${isChildFieldLua("field")} and redis.call("HGET", KEYS[1], field) == "${CHILD_RUNNING}" then
    redis.call("HSET", KEYS[1], field, "${CHILD_FINISHED}")
    before[#before + 1] = field
  end
end
redis.call("HDEL", KEYS[1], "${RUNNING_COUNT}")
local running = 0
local linked, counted
for index = 3, #KEYS do
  local at = 3 + (index - 3) * 3
  ${placeChildLua("KEYS[index]", "KEYS[1]", "KEYS[2]", 'ARGV[2] == "1"', "at", true)}
  running = running + counted
end
if running > 0 then redis.call("HSET", KEYS[1], "${RUNNING_COUNT}", running) end
local replaced = {}
for _, field in ipairs(before) do
  if redis.call("HGET", KEYS[1], field) == "${CHILD_FINISHED}" then
    replaced[#replaced + 1] = field
  end
end
return replaced
`;

/**
 * KEYS: a child's link, its run hash, its parent's run hash, and its root's `treeDeep` when
 * the root is another run. ARGV: the child's field in its parent's run hash, its id. Drops a
 * child a new turn replaced (WAIT_FOR_CHILDREN) unless its run is stored or it counts again:
 * its link and its places (returns 1). A start of it after this stores nothing (a child is
 * stored only while linked: CREATE_RUNS).
 */
export const DROP_REPLACED_LUA = `
if redis.call("HGET", KEYS[3], ARGV[1]) ~= "${CHILD_FINISHED}" then return 0 end
if redis.call("HEXISTS", KEYS[2], "record") == 1 then return 0 end
redis.call("HDEL", KEYS[3], ARGV[1])
if KEYS[4] then redis.call("SREM", KEYS[4], ARGV[2]) end
redis.call("DEL", KEYS[1])
return 1
`;

/**
 * KEYS: the parent's run hash. ARGV: the child's field. A running child turns released (a call
 * that did not start its child): it no longer counts, and linking it again counts it. It stays
 * listed while its run is stored (DROP_UNSTARTED drops it otherwise).
 */
export const RELEASE_CHILD_LUA = `
if redis.call("HGET", KEYS[1], ARGV[1]) ~= "${CHILD_RUNNING}" then return 0 end
redis.call("HSET", KEYS[1], ARGV[1], "${CHILD_RELEASED}")
if redis.call("HINCRBY", KEYS[1], "${RUNNING_COUNT}", -1) <= 0 then
  redis.call("HDEL", KEYS[1], "${RUNNING_COUNT}")
end
return 1
`;

/**
 * The Lua block ending a script: marks the child `field` finished in its parent's run hash
 * `run`, and returns 1 when no child of the parent runs any more, else 0.
 */
const childFinishedLua = (run: string, field: string) => `
if redis.call("HGET", ${run}, ${field}) == "${CHILD_RUNNING}" then
  redis.call("HSET", ${run}, ${field}, "${CHILD_FINISHED}")
  if redis.call("HINCRBY", ${run}, "${RUNNING_COUNT}", -1) > 0 then return 0 end
  redis.call("HDEL", ${run}, "${RUNNING_COUNT}")
  return 1
end
if redis.call("HEXISTS", ${run}, "${RUNNING_COUNT}") == 1 then return 0 end
return 1
`;

/**
 * KEYS: the parent's run hash. ARGV: the child's field. Marks the child finished; returns 1
 * when no child of the parent runs any more. One key only: atomic wherever the parent's key
 * lives.
 */
export const CHILD_FINISHED_LUA = childFinishedLua("KEYS[1]", "ARGV[1]");

/**
 * A child's finish in one write, instead of COMMIT_RAW then CHILD_FINISHED (one round trip and
 * one script a child fewer). KEYS: the parent's raw results (the call's iteration), events and
 * run hash: the parent's keys only, so the commit and the wake-up decision stay one atomic
 * write wherever the parent's keys live, whatever slot the child's are in. ARGV: the call's
 * field, the result's JSON, max events, the child's field in the run hash, then each event's
 * JSON. Commits the result unless one is (first write wins) and appends the events whether or
 * not it did, as COMMIT_RAW does; then CHILD_FINISHED_LUA's answer.
 */
export const FINISH_CHILD_LUA = `
${pushArgvLua}
redis.call("HSETNX", KEYS[1], ARGV[1], ARGV[2])
${appendEventsLua("KEYS[2]", "KEYS[3]", "ARGV[3]", 5, 'redis.call("HGET", KEYS[3], "etrim")')}
${childFinishedLua("KEYS[3]", "ARGV[4]")}
`;
