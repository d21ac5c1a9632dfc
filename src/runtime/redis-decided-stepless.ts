import { readSummary } from "../store/record/summary-codec.js";
import { callKey } from "../store/run-view.js";
import { StoredDecision } from "../store/schemas.js";
import type { RunSummary } from "../store/summary.js";
import { toolCallRun } from "../store/tool-call-view.js";
import type { RedisClient } from "./redis-connection.js";
import { callKeyOfField, type RedisKeys } from "./redis-keys.js";
import type { StrandedRun } from "./redis-stranded.js";

/** Index entries read per round trip. */
const CHUNK = 500;

/**
 * Runs `awaiting_approval` with a call that a person decided more than `idleMs` ago and that the
 * run still lists as asked, with no lease: `approve` stored the decision, and the step it then
 * queues (a separate command) was lost — the approving process died between the two, or the job
 * was removed from the queue — so nothing would apply the decision. Reads the
 * `awaiting_approval` status index, then only the decided runs' records; at most `limit`.
 */
export async function findDecidedStepless(
  redis: RedisClient,
  keys: RedisKeys,
  options: { now: number; idleMs: number; limit: number },
): Promise<StrandedRun[]> {
  const found: StrandedRun[] = [];
  const index = keys.index({ kind: "status", status: "awaiting_approval" });
  const decidedBefore = options.now - options.idleMs;
  for (let start = 0; found.length < options.limit; start += CHUNK) {
    const runIds = await redis.zrange(index, start, start + CHUNK - 1);
    const summaries = await Promise.all(
      runIds.map((runId) => redis.hget(keys.run(runId), "summary")),
    );
    const checks = await Promise.all(
      runIds.map(async (runId, at) => {
        const json = summaries[at] ?? null;
        const summary = json === null ? undefined : readSummary(runId, json);
        // A corrupt summary is reported elsewhere, not stepped.
        if (summary === undefined || summary.status !== "awaiting_approval") return undefined;
        return (await waitsDecided(redis, keys, summary, decidedBefore)) ? summary : undefined;
      }),
    );
    const decided = checks.filter((summary) => summary !== undefined);
    const leased = await Promise.all(decided.map((run) => redis.exists(keys.lease(run.runId))));
    for (const [at, summary] of decided.entries()) {
      if (leased[at] !== 0) continue;
      found.push({ runId: summary.runId, status: summary.status, updatedAt: summary.updatedAt });
    }
    if (runIds.length < CHUNK) break;
  }
  return found.slice(0, options.limit);
}

/** Whether the parked run has a decision from before `decidedBefore` on a call still asked. */
async function waitsDecided(
  redis: RedisClient,
  keys: RedisKeys,
  summary: RunSummary,
  decidedBefore: number,
): Promise<boolean> {
  const { runId } = summary;
  const stored = await redis.hgetall(keys.decisions(runId, summary.iterations));
  const decidedKeys = new Set<string>();
  for (const [field, json] of Object.entries(stored)) {
    const decision = parseDecision(json);
    if (decision !== undefined && decision.decidedAt < decidedBefore) {
      decidedKeys.add(callKeyOfField(field));
    }
  }
  if (decidedKeys.size === 0) return false;
  // The conversation's last message too: the document's calls may refer to its blocks. One
  // transaction, so that no save lands between the document and the conversation it counts.
  const read = await redis
    .multi()
    .hget(keys.run(runId), "record")
    .llen(keys.messages(runId))
    .lindex(keys.messages(runId), -1)
    .exec();
  const [document, length, lastJson] = (read ?? []).map(([error, value]) =>
    error === null ? value : null,
  ) as [string | null, number | null, string | null];
  if (document === null || length === null) return false;
  const last = lastJson === null ? undefined : { at: length - 1, json: lastJson };
  for (const pending of summary.pending) {
    try {
      const call = toolCallRun(document, summary, pending.toolCallId, last).call;
      if (call?.status === "asked" && decidedKeys.has(callKey(call))) return true;
    } catch {
      // A record this version cannot read is reported elsewhere, never stepped from here.
      return false;
    }
  }
  return false;
}

function parseDecision(json: string): StoredDecision | undefined {
  try {
    const parsed = StoredDecision.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
