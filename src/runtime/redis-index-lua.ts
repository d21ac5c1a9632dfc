import type { RunSummary } from "../store/summary.js";

// The Lua blocks that keep a run's index entries and announce its summary, shared by CREATE_RUNS
// and SAVE_RUN (redis-submit.ts, redis-scripts.ts) and kept apart from them: see
// redis-index-scripts.ts for the rest.

/** Statuses a run does not leave, as a Lua condition on `status`. */
export const finishedLua = (status: string) =>
  `(${status} == "completed" or ${status} == "failed" or ${status} == "cancelled")`;

/** How many strings `indexFields` gives. */
export const INDEX_FIELDS = 10;

/**
 * The fields the index scripts read, as arguments of their own (after the run's status):
 * run id, agent, session id, createdAt, updatedAt, then for the overview's counters
 * (`countOverviewLua`) its input, output, cache-read and cache-write tokens and its error code
 * ("" when none). The strings among them (ids, names, the error code) are passed as plain
 * strings, never inside JSON, so that a lone surrogate (they are any string) reaches Redis as
 * U+FFFD as in every string ioredis sends (UTF-8); numbers as JavaScript writes them, which
 * ZADD reads as the same scores (SAVE_RUN takes the numbers in a JSON array of such strings).
 */
export function indexFields(summary: RunSummary): string[] {
  const { runId, agent, sessionId, createdAt, updatedAt, usage, error } = summary;
  return [
    runId,
    agent,
    sessionId,
    String(createdAt),
    String(updatedAt),
    String(usage.inputTokens),
    String(usage.outputTokens),
    String(usage.cacheReadTokens),
    String(usage.cacheWriteTokens),
    error?.code ?? "",
  ];
}

/** Lua expressions for the run's fields `indexRunLua` uses (see `indexFields`). */
export interface IndexLuaFields {
  readonly indexPrefix: string;
  readonly id: string;
  readonly status: string;
  readonly agent: string;
  readonly sessionId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The run's stored status before this write: nil (or false) on its first write. */
  readonly old: string;
}

/**
 * The Lua block that keeps run `id` in the indexes under `indexPrefix` as its status goes from
 * `old` to `status`: on its first write (no stored status) in its session's and in `run-ids`
 * (scored 0: ordered by id, for a prefix search), then on a status
 * change out of the old status's indexes into the new one's (scored by its `createdAt`), and in
 * the finished set (scored by its `updatedAt`) while it is finished. A save that keeps the
 * status of an unfinished run changes no index. It writes nothing to the run's hash: the
 * caller stores the `summary` and `agent` fields (for filtered listings) in its own HSET, so
 * that a script writes the hash once. Shared by CREATE_RUNS and SAVE_RUN.
 */
export const indexRunLua = (at: IndexLuaFields) => `
do
  local id, status, agent, old = ${at.id}, ${at.status}, ${at.agent}, ${at.old}
  if not old then
    redis.call("ZADD", ${at.indexPrefix} .. "session:" .. ${at.sessionId}, ${at.createdAt}, id)
    redis.call("ZADD", ${at.indexPrefix} .. "run-ids", 0, id)
  end
  if old ~= status then
    if old then
      redis.call("ZREM", ${at.indexPrefix} .. "status:" .. old, id)
      redis.call("ZREM", ${at.indexPrefix} .. "agent-status:" .. old .. ":" .. agent, id)
    end
    redis.call("ZADD", ${at.indexPrefix} .. "status:" .. status, ${at.createdAt}, id)
    redis.call("ZADD", ${at.indexPrefix} .. "agent-status:" .. status .. ":" .. agent, ${at.createdAt}, id)
  end
  if ${finishedLua("status")} then redis.call("ZADD", ${at.indexPrefix} .. "finished", ${at.updatedAt}, id)
  elseif old and ${finishedLua("old")} then redis.call("ZREM", ${at.indexPrefix} .. "finished", id) end
end
`;

/**
 * A Lua function `push(key, first, last, values)`: RPUSH of values[first..last] (`values`:
 * ARGV unless given) in as few calls as the Lua stack allows (`unpack` of 1,000 at a time).
 * Returns the list's length after the last push, 0 when there was nothing to push.
 */
export const pushArgvLua = `
local function push(key, first, last, values)
  values = values or ARGV
  local length = 0
  for at = first, last, 1000 do
    length = redis.call("RPUSH", key, unpack(values, at, math.min(at + 999, last)))
  end
  return length
end
`;

/**
 * The Lua statement announcing a run's stored summary on the run-change channel, as
 * `readAnnouncement` (summary-codec.ts) reads it: `[<run id's JSON>,<stored summary>]`.
 */
export const announceLua = (channel: string, runIdJson: string, summary: string) =>
  `redis.call("PUBLISH", ${channel}, "[" .. ${runIdJson} .. "," .. ${summary} .. "]")`;
