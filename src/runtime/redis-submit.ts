import { childStartedOf } from "../store/child-started.js";
import { conversationOf } from "../store/conversation.js";
import { recordDocument } from "../store/record/encode.js";
import { encodeSummary } from "../store/record/summary-codec.js";
import type { RunRecord } from "../store/schemas.js";
import { summarize } from "../store/summary.js";
import {
  announceLua,
  INDEX_FIELDS,
  indexFields,
  indexRunLua,
  pushArgvLua,
} from "./redis-index-lua.js";
import type { RedisKeys } from "./redis-keys.js";
import { countOverviewLua } from "./redis-overview-lua.js";
import { appendEventsLua, LuaScript } from "./redis-scripts.js";

// A bulk submit (`submitMany`, a turn's children) on Redis: runs are written a chunk at a time,
// one script call a chunk, and each chunk's step jobs are added (one BullMQ `addBulk`) right
// behind its records on the same connection (on a cluster, once their reply came), while the
// next chunks' records are written. A step job never comes before its run's record: a step for
// a run not (yet) stored is dropped (see `advanceRun`).

/** Runs written by one CREATE_RUNS call: small enough to keep each call short on the server. */
export const SUBMIT_CHUNK = 500;
/** Chunks in flight at once, so that Redis works on one while this process encodes the next. */
export const SUBMIT_CHUNKS_IN_FLIGHT = 4;

/** What CREATE_RUNS stores for a new run, encoded once. */
interface NewRunFields {
  readonly document: string;
  readonly status: string;
  readonly summaryJson: string;
  readonly index: string[];
  readonly messages: string[];
}

function newRunFields(record: RunRecord): NewRunFields {
  const summary = summarize(record);
  return {
    document: recordDocument(record, summary),
    status: record.status,
    summaryJson: encodeSummary(summary),
    index: indexFields(summary),
    messages: conversationOf(record).map((message) => JSON.stringify(message)),
  };
}

/**
 * KEYS: run, messages of each run, then for the child runs among them their parents' event
 * lists and run hashes (once a parent) and their links. ARGV: index key prefix, runs channel,
 * the event lists' length bound, the number of runs, then for each run: record document,
 * status, stored summary JSON, the run id's JSON, its index fields (`indexFields`:
 * `INDEX_FIELDS` of them), the index in KEYS of its parent's event list and of its link (0 and
 * 0 for a run without a parent), its `child_started` event's JSON ("" without a parent), the
 * number of messages, the JSON of each message. A table by run: 1 (created), 0 (the run
 * exists: its hash has a record; a hash holding only the run tree's fields, of a run deleted
 * while runs below it are kept, does not count), 2 (a child whose link is gone: its call released it, `RunTree.releaseChild`; nothing
 * stored). Stores each new run's record, status, summary and agent (one HSET), conversation
 * and index entries (`indexRunLua`; `createRun` is a call with one run) and the overview's
 * counters (`countOverviewLua`), and announces it on the runs channel (`watchRuns`,
 * `announceLua`). The `child_started` event of each child it creates goes to its parent's log
 * in this same write (one append a parent, its children's events in order; none when the parent
 * is gone): a child that exists is told there once (`childStartedOf`). Every key lives under
 * the prefix, so on a cluster they share the prefix's hash slot.
 */
export const CREATE_RUNS = new LuaScript(`
${pushArgvLua}
local created = {}
local parents = {}
local started = {}
local at = 5
for each = 1, tonumber(ARGV[4]) do
  local run, messages = KEYS[each * 2 - 1], KEYS[each * 2]
  local document, status, summary, runIdJson = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  local index = at + 4
  local parent = tonumber(ARGV[at + ${4 + INDEX_FIELDS}])
  local link = tonumber(ARGV[at + ${5 + INDEX_FIELDS}])
  local event = ARGV[at + ${6 + INDEX_FIELDS}]
  local first = at + ${8 + INDEX_FIELDS}
  at = first + tonumber(ARGV[at + ${7 + INDEX_FIELDS}])
  if redis.call("HEXISTS", run, "record") == 1 then created[#created + 1] = 0
  elseif link > 0 and redis.call("EXISTS", KEYS[link]) == 0 then created[#created + 1] = 2
  else
    ${indexRunLua({
      indexPrefix: "ARGV[1]",
      id: "ARGV[index]",
      status: "status",
      agent: "ARGV[index + 1]",
      sessionId: "ARGV[index + 2]",
      createdAt: "ARGV[index + 3]",
      updatedAt: "ARGV[index + 4]",
      old: "nil",
    })}
    ${countOverviewLua({
      indexPrefix: "ARGV[1]",
      old: "nil",
      status: "status",
      agent: "ARGV[index + 1]",
      createdAt: "ARGV[index + 3]",
      usage: ["ARGV[index + 5]", "ARGV[index + 6]", "ARGV[index + 7]", "ARGV[index + 8]"],
      errorCode: "ARGV[index + 9]",
    })}
    redis.call("HSET", run, "summary", summary, "agent", ARGV[index + 1], "record", document,
      "status", status)
    redis.call("DEL", messages)
    push(messages, first, at - 1)
    ${announceLua("ARGV[2]", "runIdJson", "summary")}
    created[#created + 1] = 1
    if parent > 0 then
      if started[parent] == nil then
        started[parent] = {}
        parents[#parents + 1] = parent
      end
      table.insert(started[parent], event)
    end
  end
end
for _, parent in ipairs(parents) do
  if redis.call("HEXISTS", KEYS[parent + 1], "record") == 1 then
    local told = started[parent]
    ${appendEventsLua("KEYS[parent]", "KEYS[parent + 1]", "ARGV[3]", 1, 'redis.call("HGET", KEYS[parent + 1], "etrim")', "told")}
  end
end
return created
`);

/** CREATE_RUNS's keys and arguments for `records`, whose parents' logs keep `maxEvents`. */
export function createRunsArgs(
  keys: RedisKeys,
  records: readonly RunRecord[],
  maxEvents: number,
): [string[], string[]] {
  const runKeys: string[] = [];
  const args: string[] = [
    keys.indexPrefix,
    keys.runsChannel,
    String(maxEvents),
    String(records.length),
  ];
  for (const record of records) runKeys.push(keys.run(record.runId), keys.messages(record.runId));
  // Each parent's keys once, after the runs' own: the children of a turn share them.
  const parentAt = new Map<string, number>();
  for (const record of records) {
    const fields = newRunFields(record);
    const started = childStartedOf(record);
    const { parentRunId } = record;
    let parent = 0;
    let link = 0;
    if (started !== undefined && parentRunId !== undefined) {
      parent = parentAt.get(parentRunId) ?? 0;
      if (parent === 0) {
        parent = runKeys.length + 1;
        parentAt.set(parentRunId, parent);
        runKeys.push(keys.events(parentRunId), keys.run(parentRunId));
      }
      link = runKeys.push(keys.treeLink(record.runId));
    }
    args.push(
      fields.document,
      fields.status,
      fields.summaryJson,
      JSON.stringify(record.runId),
      ...fields.index,
      String(parent),
      String(link),
      started === undefined ? "" : JSON.stringify(started),
      String(fields.messages.length),
    );
    for (const message of fields.messages) args.push(message);
  }
  return [runKeys, args];
}

/**
 * `work` on each chunk of `size` items, at most `inFlight` chunks at a time; the results in
 * the chunks' order. Rejects with the first failure; no chunk starts after it.
 */
export async function inChunks<T, R>(
  items: readonly T[],
  size: number,
  inFlight: number,
  work: (chunk: readonly T[]) => Promise<R>,
): Promise<R[]> {
  const chunks: T[][] = [];
  for (let at = 0; at < items.length; at += size) chunks.push(items.slice(at, at + size));
  const results: R[] = new Array(chunks.length);
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < chunks.length) {
      const at = next;
      next += 1;
      try {
        results[at] = await work(chunks[at] as T[]);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, chunks.length) }, lane));
  return results;
}
