import { BUCKET_SIZES } from "../store/overview.js";
import { finishedLua } from "./redis-index-lua.js";

// The overview's counters on Redis (store/overview.ts), written by the scripts that store a
// run (CREATE_RUNS, SAVE_RUN, and ACQUIRE_LEASE as it turns a run `running`) in the same
// script: a hash per bucket under the index prefix (`overview:m:<minute>`, `overview:h:<hour>`)
// expiring a while after its window is over. The runs waiting for a person are read from the
// `awaiting_approval` status index (`oldestWait` in store/overview.ts), not kept in a set of
// their own: an entry of a sorted set per parked run cost about 140 bytes.

/** Lua expressions for what `countOverviewLua` reads (see `indexFields`). */
export interface OverviewLuaFields {
  readonly indexPrefix: string;
  /** The status stored before this write: nil (or false) on the run's first write. */
  readonly old: string;
  readonly status: string;
  readonly agent: string;
  readonly createdAt: string;
  /** Input, output, cache-read and cache-write tokens (strings of integers). */
  readonly usage: readonly [string, string, string, string];
  /** The run's error code ("" when none). */
  readonly errorCode: string;
}

const USAGE_PREFIXES = ["in", "out", "cr", "cw"] as const;

/**
 * The Lua block keeping the counters as `counterChanges` (store/overview.ts) says: a new run
 * counts for its agent, a status change moves it between status counts, a run that finishes
 * adds its tokens and, failed, its error code; all in both buckets of the run's `createdAt`.
 */
export const countOverviewLua = (at: OverviewLuaFields) => `
do
  local old, status, agent = ${at.old}, ${at.status}, ${at.agent}
  if old ~= status then
    local createdAt = tonumber(${at.createdAt})
    local usage = { ${at.usage.map((each) => `tonumber(${each})`).join(", ")} }
    local prefixes = { ${USAGE_PREFIXES.map((each) => `"${each}:"`).join(", ")} }
    local finishing = ${finishedLua("status")} and not (old and ${finishedLua("old")})
    for _, size in ipairs({ ${BUCKET_SIZES.map(
      (size) => `{ "${size.name}:", ${size.ms}, ${size.keepMs} }`,
    ).join(", ")} }) do
      local key = ${at.indexPrefix} .. "overview:" .. size[1] .. string.format("%d", math.floor(createdAt / size[2]))
      if old then redis.call("HINCRBY", key, "status:" .. old, -1)
      else redis.call("HINCRBY", key, "runs:" .. agent, 1) end
      redis.call("HINCRBY", key, "status:" .. status, 1)
      if finishing then
        for index = 1, 4 do
          if usage[index] > 0 then redis.call("HINCRBY", key, prefixes[index] .. agent, usage[index]) end
        end
        if status == "failed" and ${at.errorCode} ~= "" then
          redis.call("HINCRBY", key, "failed:" .. ${at.errorCode}, 1)
        end
      end
      redis.call("PEXPIRE", key, size[3])
    end
  end
end
`;

/**
 * KEYS: the \`awaiting_approval\` status index (the bucket keys are built from the index prefix,
 * in its slot on a cluster). ARGV: index key prefix, run key prefix, the first waiting run to
 * read (its rank by creation), how many to read, then the bucket names to read
 * (\`windowBuckets\`; none when only reading on through the waiting runs).
 * Returns {waiting runs, {run id, createdAt, summary ("" when gone)} flat for each run read,
 * then each bucket's HGETALL}.
 */
export const READ_OVERVIEW_LUA = `
local prefix, runPrefix = ARGV[1], ARGV[2]
local first = tonumber(ARGV[3])
local flat = redis.call("ZRANGE", KEYS[1], first, first + tonumber(ARGV[4]) - 1, "WITHSCORES")
local waiting = {}
for at = 1, #flat, 2 do
  waiting[#waiting + 1] = flat[at]
  waiting[#waiting + 1] = flat[at + 1]
  waiting[#waiting + 1] = redis.call("HGET", runPrefix .. flat[at], "summary") or ""
end
local reply = { redis.call("ZCARD", KEYS[1]), waiting }
for index = 5, #ARGV do
  reply[#reply + 1] = redis.call("HGETALL", prefix .. "overview:" .. ARGV[index])
end
return reply
`;
