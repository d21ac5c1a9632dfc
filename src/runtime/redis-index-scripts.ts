import { finishedLua } from "./redis-index-lua.js";
import { LuaScript } from "./redis-scripts.js";

// The run store's summaries, time indexes and audit trails in Redis (see `redisKeys`). Index keys
// are built inside the scripts from the prefix, as `indexName` builds them; with a prefix in
// braces every one of them is in the run's cluster slot.

/**
 * KEYS: the index. ARGV: limit, cursor's createdAt ("" for the first page), cursor's run id,
 * run-key prefix, status filter ("" for none), agent filter ("" for none).
 * Returns up to limit + 1 runs, newest first, as flat triples (run id, summary JSON, status): by score, then by run id bytewise, as
 * a sorted set orders its members. Entries at the cursor's score are taken when their id sorts
 * below the cursor's, so a page never repeats or skips a run, even when runs arrive meanwhile.
 * Without filters it reads only the page; with them (a session's index) it reads on until the
 * page is full or the index ends.
 */
export const LIST_RUNS = new LuaScript(`
local limit = tonumber(ARGV[1])
local runPrefix, status, agent = ARGV[4], ARGV[5], ARGV[6]
local found, count = {}, 0
local function take(id)
  local stored = redis.call("HMGET", runPrefix .. id, "summary", "status", "agent")
  local summary = stored[1]
  if not summary then return false end
  if (status ~= "" and stored[2] ~= status) or (agent ~= "" and stored[3] ~= agent) then
    return false
  end
  found[#found + 1] = id
  found[#found + 1] = summary
  found[#found + 1] = stored[2] or ""
  count = count + 1
  return count > limit
end
local function below(first, second)
  local length = math.min(#first, #second)
  for at = 1, length do
    local a, b = string.byte(first, at), string.byte(second, at)
    if a ~= b then return a < b end
  end
  return #first < #second
end
local max = "+inf"
if ARGV[2] ~= "" then
  local ties = redis.call("ZRANGE", KEYS[1], ARGV[2], ARGV[2], "BYSCORE", "REV")
  for _, id in ipairs(ties) do
    if below(id, ARGV[3]) and take(id) then return found end
  end
  max = "(" .. ARGV[2]
end
local offset, chunk = 0, limit + 1
while true do
  local ids = redis.call("ZRANGE", KEYS[1], max, "-inf", "BYSCORE", "REV", "LIMIT", offset, chunk)
  for _, id in ipairs(ids) do
    if take(id) then return found end
  end
  if #ids < chunk then return found end
  offset = offset + chunk
end
`);

/**
 * KEYS: decisions hash, audit list, run hash. ARGV: call key, decision JSON, audit entry JSON,
 * the SHA-1 of the run's `record` as it was checked ("" for none).
 * Records the decision unless the call key has one, appending its audit entry in the same
 * write: returns 1, or the decision already stored (to tell our own re-sent write by its id),
 * or -1 and writes nothing when the record is no longer the one checked.
 */
export const DECIDE = new LuaScript(`
if ARGV[4] ~= "" and redis.sha1hex(redis.call("HGET", KEYS[3], "record") or "") ~= ARGV[4] then
  return -1
end
if redis.call("HSETNX", KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call("RPUSH", KEYS[2], ARGV[3])
  return 1
end
return redis.call("HGET", KEYS[1], ARGV[1])
`);

/**
 * KEYS: run, finished set, then ARGV[2] index keys, then the run's other keys.
 * ARGV: run id, how many index keys. Deletes a finished run (0 when it is not finished, or
 * gone): drops it from the indexes and the finished set, and deletes its keys.
 */
export const PRUNE_RUN = new LuaScript(`
local status = redis.call("HGET", KEYS[1], "status")
if not ${finishedLua("status")} then
  redis.call("ZREM", KEYS[2], ARGV[1])
  return 0
end
local indexes = tonumber(ARGV[2])
for at = 2, 2 + indexes do redis.call("ZREM", KEYS[at], ARGV[1]) end
for at = 3 + indexes, #KEYS do redis.call("DEL", KEYS[at]) end
redis.call("DEL", KEYS[1])
return 1
`);
