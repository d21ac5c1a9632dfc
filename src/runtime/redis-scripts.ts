import { createHash } from "../core/node-crypto.js";
import { mastersOf, type RedisClient } from "./redis-connection.js";
import { announceLua, finishedLua, indexRunLua, pushArgvLua } from "./redis-index-lua.js";
import { countOverviewLua } from "./redis-overview-lua.js";

/**
 * A Lua script run by its SHA: loaded when the backend starts (`loadAll`), and again on first
 * use after the server lost it (a restart, `SCRIPT FLUSH`).
 */
export class LuaScript {
  static readonly #all = new Set<LuaScript>();
  readonly #lua: string;
  // Hashed on first use: the scripts are made when the package is imported, most programs
  // never send one.
  #sha: string | undefined;

  constructor(lua: string) {
    this.#lua = lua;
    LuaScript.#all.add(this);
  }

  /** The script's SHA1, by which Redis knows it. */
  get sha(): string {
    this.#sha ??= createHash("sha1").update(this.#lua).digest("hex");
    return this.#sha;
  }

  /**
   * Loads every script into the script cache of each server holding data, so that the first
   * calls (say, the first submits of a fresh Redis, all at once) need not be sent again.
   */
  static async loadAll(redis: RedisClient): Promise<void> {
    const scripts = [...LuaScript.#all];
    await Promise.all(
      mastersOf(redis).map((server) =>
        Promise.all(scripts.map((script) => server.script("LOAD", script.#lua))),
      ),
    );
  }

  /**
   * Runs the script. Sent at once, so it goes ahead of whatever is sent after it on the same
   * connection, unless Redis does not know the script yet: then it is sent again in full,
   * behind those commands, and `onResent` is called before that.
   */
  async run(
    redis: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
    onResent?: () => void,
  ): Promise<unknown> {
    // The keys and arguments go as two arrays, not spread: ioredis flattens a command's
    // arguments itself (`Command`: `args.flat()`), so a spread copy per call is garbage only.
    const flattened = [keys, args] as unknown as string[];
    try {
      return await redis.evalsha(this.sha, keys.length, ...flattened);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      onResent?.();
      return redis.eval(this.#lua, keys.length, ...flattened);
    }
  }
}

// A run's events: a Redis list of their JSON, oldest first, bounded to its last `max` entries;
// the run hash's `etrim` field counts the entries trimmed from its head, so that readers keep
// absolute positions. Every append publishes on a channel named like the list, which wakes the
// readers waiting on it. The message carries the absolute position of the first appended
// event and, when they weigh at most DELIVERED_BYTES, the events themselves, one JSON a line:
// a reader that has read up to that position takes them without reading the list again.

/** Appended events heavier than this (in all) are not carried by the wake-up message. */
const DELIVERED_BYTES = 8192;

/**
 * The Lua body that appends the events in ARGV[first..] to list `events` of run hash `run`,
 * trims it to `max` entries (counting them in `etrim`, whose stored value is the Lua
 * expression `etrim`), and wakes its readers. Shared by APPEND_EVENTS and the fenced SAVE_RUN,
 * which has read `etrim` already; needs `pushArgvLua`. `first` is a Lua expression. One RPUSH
 * of all the events, whose reply (the list's new length) gives the position of the first one
 * and the excess over `max`. `values` names a Lua table of the events' JSON to append from
 * instead of ARGV (CREATE_RUNS: the events of the children it created).
 */
export const appendEventsLua = (
  events: string,
  run: string,
  max: string,
  first: number | string,
  etrim: string,
  values = "ARGV",
) => `
if #${values} >= ${first} then
  local trimmed = tonumber(${etrim} or "0")
  local length = push(${events}, ${first}, #${values}${values === "ARGV" ? "" : `, ${values}`})
  local delivered = {tostring(trimmed + length - (#${values} - ${first} + 1))}
  local size = 0
  for index = ${first}, #${values} do size = size + #${values}[index] end
  if size <= ${DELIVERED_BYTES} then
    for index = ${first}, #${values} do delivered[#delivered + 1] = ${values}[index] end
  end
  local excess = length - tonumber(${max})
  if excess > 0 then
    redis.call("LTRIM", ${events}, excess, -1)
    redis.call("HINCRBY", ${run}, "etrim", excess)
  end
  redis.call("PUBLISH", ${events}, table.concat(delivered, "\\n"))
end
`;

/** KEYS: events, run. ARGV: max length, then each event's JSON. */
export const APPEND_EVENTS = new LuaScript(`
${pushArgvLua}
${appendEventsLua("KEYS[1]", "KEYS[2]", "ARGV[1]", 2, 'redis.call("HGET", KEYS[2], "etrim")')}
return 1
`);

/**
 * KEYS: events, run. ARGV: absolute position, count.
 * Returns {absolute position of the first entry returned, 1 if the list exists, entries, 1
 * when the list does not exist and the run may have a last word without it (it is finished,
 * or it has no status: unknown, or the store lost it)}: from `position`, or from the oldest
 * kept entry when the ones before were trimmed away.
 */
export const READ_EVENTS = new LuaScript(`
local stored = redis.call("HMGET", KEYS[2], "etrim", "status")
local trimmed = tonumber(stored[1] or "0")
local start = tonumber(ARGV[1]) - trimmed
if start < 0 then start = 0 end
local entries = redis.call("LRANGE", KEYS[1], start, start + tonumber(ARGV[2]) - 1)
-- Entries read: the list exists (no EXISTS needed).
local exists = 1
if #entries == 0 then exists = redis.call("EXISTS", KEYS[1]) end
local status = stored[2]
local final = 0
if exists == 0 and (not status or ${finishedLua("status")}) then final = 1 end
return {trimmed + start, exists, entries, final}
`);

/**
 * The Lua block that turns a `queued` run `running` as a worker takes its lease: the status
 * field, the status in the summary and the record document (JSON our writers made, in which
 * `"status":"queued"` can only be the run's own: a quote inside a string value is escaped, and
 * a queued run has no snapshot or result that could hold one) and the status indexes
 * (scored by the run's `createdAt`, as `indexRunLua` scores them), announcing the new summary
 * on `channel`. `stored` holds the run hash's record, raw, summary, status and agent fields;
 * its summary is updated in place.
 */
const startRunningLua = (
  run: string,
  indexPrefix: string,
  id: string,
  channel: string,
  stored: string,
) => `
if ${stored}[4] == "queued" and ${stored}[1] and ${stored}[3] and ${stored}[5] then
  local id = ${id}
  -- The first \`from\` in \`text\` made \`to\`, and 1; or \`text\` and 0. A plain find: a Lua pattern
  -- (string.gsub) copies the text a byte at a time, several times the cost on the server.
  local function replaceOnce(text, from, to)
    local at = string.find(text, from, 1, true)
    if not at then return text, 0 end
    return string.sub(text, 1, at - 1) .. to .. string.sub(text, at + #from), 1
  end
  -- The stored summary's short form (summary-codec.ts) leaves out a queued run's usual phase,
  -- which a running one states; a summary stored in the full form says status in full.
  local summary, changed = replaceOnce(${stored}[3], '"st":"queued"', '"st":"running"')
  if changed == 1 and not string.find(summary, '"ph":', 1, true) then
    summary = replaceOnce(summary, '"st":"running"', '"st":"running","ph":"compose"')
  elseif changed == 0 then
    summary, changed = replaceOnce(${stored}[3], '"status":"queued"', '"status":"running"')
  end
  if changed == 1 then
    local queued = ${indexPrefix} .. "status:queued"
    local createdAt = redis.call("ZSCORE", queued, id)
    -- A document that does not leave its status to the summary (a run not started has no
    -- snapshot) says it too, as the run's own field: a quote inside a string value is escaped.
    local document = replaceOnce(${stored}[1], '"status":"queued"', '"status":"running"')
    redis.call("HSET", ${run}, "summary", summary, "status", "running", "record", document)
    ${stored}[1] = document
    ${stored}[3] = summary
    if createdAt then
      redis.call("ZREM", queued, id)
      redis.call("ZREM", ${indexPrefix} .. "agent-status:queued:" .. ${stored}[5], id)
      redis.call("ZADD", ${indexPrefix} .. "status:running", createdAt, id)
      redis.call("ZADD", ${indexPrefix} .. "agent-status:running:" .. ${stored}[5], createdAt, id)
      ${countOverviewLua({
        indexPrefix,
        old: '"queued"',
        status: '"running"',
        agent: `${stored}[5]`,
        createdAt: "createdAt",
        usage: ["0", "0", "0", "0"],
        errorCode: '""',
      })}
    end
    ${announceLua(channel, "cjson.encode(id)", "summary")}
  end
end
`;

/** Statuses a run does not leave, as a Lua condition on the local `status`. */
const FINISHED = `(status == "completed" or status == "failed" or status == "cancelled")`;

/**
 * KEYS: lease, wake, run, cancel, messages. ARGV: ttlMs, index key prefix, runId, the
 * run-change channel, the run's raw-results keys before their iteration (`rawOfRun`).
 * Free: a new fencing token (the run hash's `fence` counter, HINCRBY) holds the lease; a run
 * with no record (unknown, or pruned: a hash left holding its tree's fields has none) gets
 * token 0, which no save accepts, and no hash is made.
 * A `queued` run turns `running` here (its summary, status field and status indexes, announced
 * on the run-change channel): a worker has it from now on, so it reads as running before its
 * first save.
 * Held: leave a wake-up for the holder.
 * Returns {1, token, cancel flag (1/0), record document ("" when none), raw results, the
 * conversation's messages, the summary ("" when none)} or {0, remaining ms}: the holder's opening reads come with the
 * lease, in one round trip. The raw
 * results (flat field/value list) are those of the iteration the run's `raw` field names: the
 * one it stands at `dispatch` in (set by SAVE_RUN; the field holds the iteration alone, not a
 * copy of the key).
 */
export const ACQUIRE_LEASE = new LuaScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then
  redis.call("SET", KEYS[2], "1")
  return {0, redis.call("PTTL", KEYS[1])}
end
local token = 0
if redis.call("HEXISTS", KEYS[3], "record") == 1 then
  token = redis.call("HINCRBY", KEYS[3], "fence", 1)
end
redis.call("SET", KEYS[1], token, "PX", ARGV[1])
redis.call("DEL", KEYS[2])
local stored = redis.call("HMGET", KEYS[3], "record", "raw", "summary", "status", "agent")
${startRunningLua("KEYS[3]", "ARGV[2]", "ARGV[3]", "ARGV[4]", "stored")}
local raw = {}
if stored[2] then
  -- The iteration (a whole key, as earlier versions stored it, holds a ":").
  local rawKey = stored[2]
  if not string.find(rawKey, ":", 1, true) then rawKey = ARGV[5] .. rawKey end
  raw = redis.call("HGETALL", rawKey)
end
local messages = {}
if stored[1] then messages = redis.call("LRANGE", KEYS[5], 0, -1) end
return {1, token, redis.call("EXISTS", KEYS[4]), stored[1] or "", raw, messages, stored[3] or ""}
`);

/** KEYS: lease. ARGV: token, ttlMs. Returns 1 when the lease was still ours and is extended. */
export const RENEW_LEASE = new LuaScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
return 0
`);

/**
 * KEYS: leases. ARGV: ttlMs, then the token of each lease. RENEW_LEASE of each: 1 for a lease
 * still ours (extended), 0 for one lost, in KEYS order.
 */
export const RENEW_LEASES = new LuaScript(`
local renewed = {}
for index, key in ipairs(KEYS) do
  if redis.call("GET", key) == ARGV[index + 1] then
    redis.call("PEXPIRE", key, ARGV[1])
    renewed[index] = 1
  else
    renewed[index] = 0
  end
end
return renewed
`);

/**
 * KEYS: lease, wake. ARGV: token.
 * Drops the lease if still ours; returns 1 when a wake-up was left meanwhile (and takes it).
 */
export const RELEASE_LEASE = new LuaScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
end
if redis.call("DEL", KEYS[2]) == 1 then return 1 end
return 0
`);

/**
 * KEYS: run, cancel, lease, events, messages, wake, checkpoints; when the run finished, its
 * tree link (read) and the keys to expire besides cancel and wake.
 * ARGV: the save's small fields as one JSON array of strings (`saveFields`, decoded here:
 * each of them a command argument of its own cost the worker about 190 bytes of allocation),
 * the record document, the summary JSON, the index key prefix, the raw-results key of the
 * iteration the run stands at `dispatch` in ("" otherwise: its iteration, the key's last part,
 * is recorded in the run's `raw` field for ACQUIRE_LEASE), the run-change channel, the save's
 * checkpoint JSON ("" for none), the run id's JSON (for the announcement), the run id, its
 * agent, session id and error code (""
 * when none: the index fields that are any string stay out of JSON, see `indexFields`), then
 * the JSON of each of the `count` new messages, then the JSON of each event to append.
 * Fenced write: refused (-1) unless `token` is the newest issued (the run hash's `fence`);
 * refused (-2) when the stored conversation is not as long as the caller says. Appends the new
 * messages, the checkpoint and the events (waking their readers), writes the run's record,
 * status and summary (one HSET) and moves it between the indexes (`indexRunLua`; keys built
 * from the prefix, in the run's slot when the prefix is in braces), keeps the overview's
 * counters (`countOverviewLua`), extends the lease (or
 * gives it up, taking the wake-up left meanwhile), sets the retention expiry of a finished
 * run's working keys, and announces the summary on the run-change channel. Returns {1, cancel
 * requested (1/0), wake-up taken (1/0), the raw results committed so far at `dispatch` (flat
 * field/value list; empty otherwise), and when the run finished, its tree link ("" for a
 * root: the step that finished it wakes its parent, SPEC §14)}.
 * The lease key needs no check of its own: while `token` is the run's fence, the lease key
 * holds that token or is gone (expired), since every acquisition takes a new token
 * (ACQUIRE_LEASE) before it sets the key.
 */
export const SAVE_RUN = new LuaScript(`
-- f: token, status, lease ttlMs, retentionMs ("" while the run is not finished), the event
-- list's length bound, the number of messages stored already ("" to write the conversation
-- anew), "1" to give the lease up ("" to extend it), the number of new messages, then the
-- index fields between the run's names and its error code (created, updated, the four token
-- counts).
local f = cjson.decode(ARGV[1])
local stored = redis.call("HMGET", KEYS[1], "fence", "status", "etrim", "raw")
if stored[1] ~= f[1] then return -1 end
local count = tonumber(f[8])
if f[6] == "" then redis.call("DEL", KEYS[5])
elseif redis.call("LLEN", KEYS[5]) ~= tonumber(f[6]) then return -2 end
${pushArgvLua}
if ARGV[7] ~= "" then redis.call("RPUSH", KEYS[7], ARGV[7]) end
local firstMessage = 13
local firstEvent = firstMessage + count
push(KEYS[5], firstMessage, firstEvent - 1)
${appendEventsLua("KEYS[4]", "KEYS[1]", "f[5]", "firstEvent", "stored[3]")}
${indexRunLua({
  indexPrefix: "ARGV[4]",
  id: "ARGV[9]",
  status: "f[2]",
  agent: "ARGV[10]",
  sessionId: "ARGV[11]",
  createdAt: "f[9]",
  updatedAt: "f[10]",
  old: "stored[2]",
})}
${countOverviewLua({
  indexPrefix: "ARGV[4]",
  old: "stored[2]",
  status: "f[2]",
  agent: "ARGV[10]",
  createdAt: "f[9]",
  usage: ["f[11]", "f[12]", "f[13]", "f[14]"],
  errorCode: "ARGV[12]",
})}
local raw = {}
if ARGV[5] ~= "" then
  redis.call("HSET", KEYS[1], "record", ARGV[2], "status", f[2], "summary", ARGV[3],
    "agent", ARGV[10], "raw", string.match(ARGV[5], "[^:]*$"))
  raw = redis.call("HGETALL", ARGV[5])
else
  redis.call("HSET", KEYS[1], "record", ARGV[2], "status", f[2], "summary", ARGV[3],
    "agent", ARGV[10])
  if stored[4] then redis.call("HDEL", KEYS[1], "raw") end
end
local woken = 0
if f[7] == "1" then
  redis.call("DEL", KEYS[3])
  woken = redis.call("DEL", KEYS[6])
else redis.call("PEXPIRE", KEYS[3], f[3]) end
local cancelled = redis.call("EXISTS", KEYS[2])
if f[4] ~= "" then
  redis.call("PEXPIRE", KEYS[2], f[4])
  redis.call("PEXPIRE", KEYS[6], f[4])
  for index = 9, #KEYS do redis.call("PEXPIRE", KEYS[index], f[4]) end
end
${announceLua("ARGV[6]", "ARGV[8]", "ARGV[3]")}
if f[4] ~= "" then return {1, cancelled, woken, raw, redis.call("GET", KEYS[8]) or ""} end
return {1, cancelled, woken, raw}
`);

/**
 * KEYS: cancel, run. ARGV: retentionMs, the cancel channel, runId, who asks ("": unnamed).
 * Records a cancel request (on a run that finished meanwhile it expires with the run's keys)
 * and announces it on the channel, so the worker holding the run aborts at once. Who asked
 * first is kept in the run's hash (`cancelledBy`), for as long as the record.
 */
export const REQUEST_CANCEL = new LuaScript(`
redis.call("SET", KEYS[1], "1")
local status = redis.call("HGET", KEYS[2], "status")
if ${FINISHED} then redis.call("PEXPIRE", KEYS[1], ARGV[1])
else
  if status and ARGV[4] ~= "" then redis.call("HSETNX", KEYS[2], "cancelledBy", ARGV[4]) end
  redis.call("PUBLISH", ARGV[2], ARGV[3])
end
return 1
`);

/**
 * What a tool job reads (`openToolCall`), in one call. KEYS: run, raw (the job's iteration),
 * cancel, in-flight hash (the job's iteration), messages. ARGV: the call's raw field, the
 * attempt's in-flight field ("": no mark), the mark (unique per call). Returns {the record's
 * document or "", its summary or "", 1 if the call's raw result is committed, 1 if a cancel
 * was asked, the mark: "" when not tried, 1 when this marked the attempt started, else the
 * mark found, the conversation's length and its last message ("" when none)}. The mark is
 * tried only for a stored, unfinished run whose call is not committed and not asked to cancel.
 * Of the conversation only the last message is read: the calls of a document may refer to its
 * blocks (record version 5); a tool job needs no other.
 */
export const OPEN_TOOL_CALL = new LuaScript(`
local stored = redis.call("HMGET", KEYS[1], "record", "summary", "status")
local committed = redis.call("HEXISTS", KEYS[2], ARGV[1])
local cancelled = redis.call("EXISTS", KEYS[3])
local status = stored[3]
local started = ""
if ARGV[2] ~= "" and stored[1] and committed == 0 and cancelled == 0
  and not (status and ${finishedLua("status")}) then
  if redis.call("HSETNX", KEYS[4], ARGV[2], ARGV[3]) == 1 then started = 1
  else started = redis.call("HGET", KEYS[4], ARGV[2]) end
end
local length, last = 0, ""
if stored[1] then
  length = redis.call("LLEN", KEYS[5])
  if length > 0 then last = redis.call("LINDEX", KEYS[5], -1) end
end
return {stored[1] or "", stored[2] or "", committed, cancelled, started, length, last}
`);

/**
 * Commits a handler's raw result unless one is committed (the first write wins), and appends
 * the events its tool job emitted and has not sent yet (its `tool_start`, …) to the run's
 * log, in one atomic write: whether or not the commit wins, as a separate append would.
 * KEYS: raw (the job's iteration), events, run. ARGV: the call's field, the result's JSON,
 * max events, then each event's JSON. Returns 1 when this committed, else 0.
 */
export const COMMIT_RAW = new LuaScript(`
${pushArgvLua}
local won = redis.call("HSETNX", KEYS[1], ARGV[1], ARGV[2])
${appendEventsLua("KEYS[2]", "KEYS[3]", "ARGV[3]", 4, 'redis.call("HGET", KEYS[3], "etrim")')}
return won
`);

/**
 * Marks a call attempt's handler started unless it was marked before, and then appends the
 * events (its `tool_start`) to the run's log, in one atomic write. KEYS: in-flight hash,
 * events, run. ARGV: the call's field, the mark (unique per attempt), max events, then each
 * event's JSON. Returns 1 when this marked it, else the mark found (a reply lost and re-sent
 * finds our own).
 */
export const MARK_STARTED = new LuaScript(`
${pushArgvLua}
if redis.call("HSETNX", KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return redis.call("HGET", KEYS[1], ARGV[1])
end
${appendEventsLua("KEYS[2]", "KEYS[3]", "ARGV[3]", 4, 'redis.call("HGET", KEYS[3], "etrim")')}
return 1
`);
