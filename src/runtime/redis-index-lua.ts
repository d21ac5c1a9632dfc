import type { RunSummary } from "../store/summary.js";
import { wellFormed } from "./redis-keys.js";

// The Lua block that keeps a run's summary and index entries, shared by CREATE_RUNS and SAVE_RUN
// (redis-scripts.ts) and kept apart from them: see redis-index-scripts.ts for the rest.

/** Statuses a run does not leave, as a Lua condition on `status`. */
export const finishedLua = (status: string) =>
  `(${status} == "completed" or ${status} == "failed" or ${status} == "cancelled")`;

/**
 * The fields the index scripts read, as JSON that Redis's cjson can decode: it refuses a lone
 * surrogate's escape (ids and names are any string), so those become U+FFFD here, as they do
 * in every string ioredis sends (UTF-8). The stored summary keeps the exact strings.
 */

export function indexHead(summary: RunSummary): string {
  const { runId, status, agent, sessionId, createdAt, updatedAt } = summary;
  return JSON.stringify({
    runId: wellFormed(runId),
    status,
    agent: wellFormed(agent),
    sessionId: wellFormed(sessionId),
    createdAt,
    updatedAt,
  });
}

/**
 * The Lua block that writes the `summary` (JSON) of run hash `run` and keeps the run in the
 * indexes under `indexPrefix`, given the index fields `head` (`indexHead`): on its first write
 * (no `status` in the hash yet) in its session's, then on a status change out of the old
 * status's indexes into the new one's, and in the finished set (scored by its `updatedAt`)
 * while it is finished. Also keeps the run's `agent` in the hash for filtered listings. Reads
 * the run's previous status, so it runs before anything else of the script changes the hash.
 * Shared by CREATE_RUNS and SAVE_RUN.
 */
export const indexRunLua = (run: string, indexPrefix: string, summary: string, head: string) => `
do
  local head = cjson.decode(${head})
  local id, status, agent = head.runId, head.status, head.agent
  local old = redis.call("HGET", ${run}, "status")
  if not old then
    redis.call("ZADD", ${indexPrefix} .. "session:" .. head.sessionId, head.createdAt, id)
  end
  if old ~= status then
    if old then
      redis.call("ZREM", ${indexPrefix} .. "status:" .. old, id)
      redis.call("ZREM", ${indexPrefix} .. "agent-status:" .. old .. ":" .. agent, id)
    end
    redis.call("ZADD", ${indexPrefix} .. "status:" .. status, head.createdAt, id)
    redis.call("ZADD", ${indexPrefix} .. "agent-status:" .. status .. ":" .. agent, head.createdAt, id)
  end
  if ${finishedLua("status")} then redis.call("ZADD", ${indexPrefix} .. "finished", head.updatedAt, id)
  elseif old and ${finishedLua("old")} then redis.call("ZREM", ${indexPrefix} .. "finished", id) end
  redis.call("HSET", ${run}, "summary", ${summary}, "agent", agent)
end
`;

/**
 * The Lua statement announcing a run's stored summary on the run-change channel, as
 * `readAnnouncement` (summary-codec.ts) reads it: `[<run id's JSON>,<stored summary>]`.
 */
export const announceLua = (channel: string, runIdJson: string, summary: string) =>
  `redis.call("PUBLISH", ${channel}, "[" .. ${runIdJson} .. "," .. ${summary} .. "]")`;
