import { z } from "zod";
import { lazySchema } from "../../core/lazy-schema.js";
import type { GivenApproval } from "../../core/values.js";
import type { QuorumApproval, QuorumOutcome } from "../../store/call-ledger.js";
import { BackendError } from "../../store/errors.js";
import { decodeStored } from "../../store/record/codec.js";
import type { RunRecord, StoredDecision } from "../../store/schemas.js";
import type { DecisionRecord } from "../../store/summary.js";
import { callField, callKeyOfField } from "../redis-keys.js";
import { LuaScript } from "../redis-scripts.js";
import { checkedRecordFingerprint } from "./checked-record.js";
import type { RedisContext } from "./context.js";

/**
 * KEYS: the round's decisions hash, its quorum hash, the run's audit list, the run hash.
 * ARGV: call field, decision JSON, audit JSON, record SHA1 checked ("" for none), by, approved
 * input hash ("" for a deny or respond: they decide at once), approvals needed, request id, the
 * counted approval's JSON. Replies `{code, stored}`: 0 decided before (`stored`: that decision),
 * 1 decided now, 2 counted, 3 `by` has decided the call already, -1 the record changed.
 */
const DECIDE_IN_QUORUM = new LuaScript(`
if ARGV[4] ~= "" and redis.sha1hex(redis.call("HGET", KEYS[4], "record") or "") ~= ARGV[4] then
  return {-1, ""}
end
local existing = redis.call("HGET", KEYS[1], ARGV[1])
if existing then return {0, existing} end
local given = {}
local counted = redis.call("HGET", KEYS[2], ARGV[1])
if counted then given = cjson.decode(counted) end
for _, each in ipairs(given) do
  if each.id == ARGV[8] then return {2, ""} end
  if each.by == ARGV[5] then return {3, ""} end
end
redis.call("RPUSH", KEYS[3], ARGV[3])
if ARGV[6] == "" then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[2])
  return {1, ""}
end
table.insert(given, cjson.decode(ARGV[9]))
redis.call("HSET", KEYS[2], ARGV[1], cjson.encode(given))
local agreeing = 0
for _, each in ipairs(given) do
  if each.inputHash == ARGV[6] then agreeing = agreeing + 1 end
end
if agreeing < tonumber(ARGV[7]) then return {2, ""} end
redis.call("HSET", KEYS[1], ARGV[1], ARGV[2])
return {1, ""}
`);

/** How often a decision is checked again when the run's record changed meanwhile. */
const MAX_ATTEMPTS = 5;

const Reply = lazySchema(() => z.tuple([z.number(), z.string()]));

const CountedApprovals = lazySchema(() =>
  z.array(z.object({ by: z.string(), at: z.number(), reason: z.string().nullable() }).loose()),
);

/** `CallLedger.decideInQuorum` on Redis: one script call, checked as `decide` checks. */
export async function decideInQuorum(
  context: RedisContext,
  request: {
    runId: string;
    iteration: number;
    callKey: string;
    decision: StoredDecision;
    audit: DecisionRecord;
    approval: QuorumApproval;
    check?: ((record: RunRecord | undefined) => void) | undefined;
  },
): Promise<QuorumOutcome> {
  const { redis, keys } = context;
  const { runId, iteration, decision, approval, check } = request;
  const counted = {
    id: decision.id,
    by: approval.by,
    at: decision.decidedAt,
    reason: decision.reason ?? null,
    inputHash: approval.inputHash ?? "",
  };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const checked = await checkedRecordFingerprint(context, runId, check);
    const [code, stored] = Reply.parse(
      await DECIDE_IN_QUORUM.run(
        redis,
        [
          keys.decisions(runId, iteration),
          keys.quorum(runId, iteration),
          keys.audit(runId),
          keys.run(runId),
        ],
        [
          callField(request.callKey),
          JSON.stringify(decision),
          JSON.stringify(request.audit),
          checked,
          approval.by,
          approval.inputHash ?? "",
          approval.needed,
          decision.id,
          JSON.stringify(counted),
        ],
      ),
    );
    if (code === -1) continue;
    if (code === 1) return "decided";
    if (code === 2) return "counted";
    if (code === 3) return "repeated";
    // Decided before: by this very request when a lost reply made ioredis send it again.
    return decodeStored(StoredDecisionId, stored, `A decision of run "${runId}"`).id === decision.id
      ? "decided"
      : "already_decided";
  }
  throw new BackendError(
    `Run "${runId}" kept changing while a decision on it was recorded; nothing was recorded.`,
  );
}

const StoredDecisionId = lazySchema(() => z.looseObject({ id: z.string() }));

/** `CallLedger.quorumApprovals` on Redis. */
export async function quorumApprovals(
  context: RedisContext,
  runId: string,
  iteration: number,
): Promise<Record<string, GivenApproval[]>> {
  const stored = await context.redis.hgetall(context.keys.quorum(runId, iteration));
  return Object.fromEntries(
    Object.entries(stored).map(([field, json]) => [
      callKeyOfField(field),
      decodeStored(CountedApprovals, json, `The approvals of run "${runId}"`).map(
        ({ by, at, reason }) => ({ by, at, reason }),
      ),
    ]),
  );
}
