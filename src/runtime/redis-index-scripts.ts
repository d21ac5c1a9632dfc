import { READ_OVERVIEW_LUA } from "./redis-overview-lua.js";
import { LuaScript } from "./redis-scripts.js";

// The run store's summaries, time indexes and audit trails in Redis (see `redisKeys`). Index keys
// are built inside the scripts from the prefix, as `indexName` builds them; with a prefix in
// braces every one of them is in the run's cluster slot.

/**
 * KEYS: the indexes to read together (no run is in two of them). ARGV: limit, cursor's
 * createdAt ("" for the first page), cursor's run id, run-key prefix, status filter ("" for
 * none), agent filter ("" for none).
 * Returns up to limit + 1 runs, newest first, as flat triples (run id, summary JSON, status):
 * by score, then by run id bytewise, as a sorted set orders its members; several indexes are
 * merged in that order. Entries at the cursor's score are taken when their id sorts below the
 * cursor's, so a page never repeats or skips a run, even when runs arrive meanwhile. Each index
 * is read a page at a time; with filters (a session's index) it reads on until the page is full
 * or the indexes end.
 */
export const LIST_RUNS = new LuaScript(`
local limit = tonumber(ARGV[1])
local cursorScore, cursorId = ARGV[2], ARGV[3]
local runPrefix, status, agent = ARGV[4], ARGV[5], ARGV[6]
local found, count = {}, 0
local chunk = limit + 1
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
-- One lane per index: its entries after the cursor, newest first, as {score, id}, read a
-- chunk at a time (the cursor's ties first).
local lanes = {}
for _, key in ipairs(KEYS) do
  local lane = { key = key, entries = {}, at = 1, offset = 0, max = "+inf", ended = false }
  if cursorScore ~= "" then
    local ties = redis.call("ZRANGE", key, cursorScore, cursorScore, "BYSCORE", "REV")
    for _, id in ipairs(ties) do
      if below(id, cursorId) then lane.entries[#lane.entries + 1] = { tonumber(cursorScore), id } end
    end
    lane.max = "(" .. cursorScore
  end
  lanes[#lanes + 1] = lane
end
local function head(lane)
  if lane.at > #lane.entries then
    if lane.ended then return nil end
    local flat = redis.call("ZRANGE", lane.key, lane.max, "-inf", "BYSCORE", "REV",
      "LIMIT", lane.offset, chunk, "WITHSCORES")
    lane.entries, lane.at = {}, 1
    for at = 1, #flat, 2 do lane.entries[#lane.entries + 1] = { tonumber(flat[at + 1]), flat[at] } end
    lane.offset = lane.offset + #lane.entries
    lane.ended = #lane.entries < chunk
    if #lane.entries == 0 then return nil end
  end
  return lane.entries[lane.at]
end
while true do
  local newest, best = nil, nil
  for _, lane in ipairs(lanes) do
    local entry = head(lane)
    if entry and (not best or entry[1] > best[1] or (entry[1] == best[1] and below(best[2], entry[2]))) then
      newest, best = lane, entry
    end
  end
  if not newest then return found end
  newest.at = newest.at + 1
  if take(best[2]) then return found end
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

/** Reads the overview's buckets and waiting runs in one round trip (see `READ_OVERVIEW_LUA`). */
export const READ_OVERVIEW = new LuaScript(READ_OVERVIEW_LUA);
