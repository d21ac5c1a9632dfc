// The Lua block that keeps a run's summary and index entries, shared by CREATE_RUN and SAVE_RUN
// (redis-scripts.ts) and kept apart from them: see redis-index-scripts.ts for the rest.

/** Statuses a run does not leave, as a Lua condition on `status`. */
export const finishedLua = (status: string) =>
  `(${status} == "completed" or ${status} == "failed" or ${status} == "cancelled")`;

/**
 * The Lua block that writes the `summary` (JSON) of run hash `run` and keeps the run in the
 * indexes under `indexPrefix`: on its first write in all of them, then on a status change out
 * of the old status's indexes into the new one's, and in the finished set (scored by its
 * `updatedAt`, under the index prefix) while it is finished. Reads the run's previous summary, so it runs before
 * anything else of the script changes the hash. Shared by CREATE_RUN and SAVE_RUN.
 */
export const indexRunLua = (run: string, indexPrefix: string, summary: string) => `
do
  local summary = cjson.decode(${summary})
  local id, status, agent = summary.runId, summary.status, summary.agent
  local previous = redis.call("HGET", ${run}, "summary")
  local old = nil
  if previous then
    old = cjson.decode(previous).status
  else
    for _, name in ipairs({"all", "agent:" .. agent, "session:" .. summary.sessionId}) do
      redis.call("ZADD", ${indexPrefix} .. name, summary.createdAt, id)
    end
  end
  if old ~= status then
    if old then
      redis.call("ZREM", ${indexPrefix} .. "status:" .. old, id)
      redis.call("ZREM", ${indexPrefix} .. "agent-status:" .. old .. ":" .. agent, id)
    end
    redis.call("ZADD", ${indexPrefix} .. "status:" .. status, summary.createdAt, id)
    redis.call("ZADD", ${indexPrefix} .. "agent-status:" .. status .. ":" .. agent, summary.createdAt, id)
  end
  if ${finishedLua("status")} then redis.call("ZADD", ${indexPrefix} .. "finished", summary.updatedAt, id)
  elseif old and ${finishedLua("old")} then redis.call("ZREM", ${indexPrefix} .. "finished", id) end
  redis.call("HSET", ${run}, "summary", ${summary})
end
`;
