import { readSummary } from "../store/record/summary-codec.js";
import type { RunRecordStatus } from "../store/schemas.js";
import type { RedisClient } from "./redis-connection.js";
import type { RedisKeys } from "./redis-keys.js";

/** A run that nothing is advancing: see `findStrandedRuns`. */
export interface StrandedRun {
  runId: string;
  status: RunRecordStatus;
  /** When it was last saved (ms since the epoch). */
  updatedAt: number;
}

/** The statuses in which a run needs a job to move on. */
const UNFINISHED: readonly RunRecordStatus[] = ["queued", "running"];
/** Index entries read per round trip. */
const CHUNK = 500;

/**
 * Runs left `queued` or `running` with no live lease that have not been saved for `idleMs`:
 * their job was lost (removed from the queue by hand, say) and nothing else would step them.
 * Reads the status indexes only, so its cost grows with the unfinished runs, never with the
 * runs stored; at most `limit` are returned.
 */
export async function findStrandedRuns(
  redis: RedisClient,
  keys: RedisKeys,
  options: { now: number; idleMs: number; limit: number },
): Promise<StrandedRun[]> {
  const stranded: StrandedRun[] = [];
  for (const status of UNFINISHED) {
    const index = keys.index({ kind: "status", status });
    for (let start = 0; stranded.length < options.limit; start += CHUNK) {
      const runIds = await redis.zrange(index, start, start + CHUNK - 1);
      const idle = await idleRuns(redis, keys, runIds, options.now - options.idleMs);
      const leased = await Promise.all(idle.map((run) => redis.exists(keys.lease(run.runId))));
      stranded.push(...idle.filter((_run, at) => leased[at] === 0));
      if (runIds.length < CHUNK) break;
    }
  }
  return stranded.slice(0, options.limit);
}

/** Of `runIds`, the unfinished ones last saved before `savedBefore`. */
async function idleRuns(
  redis: RedisClient,
  keys: RedisKeys,
  runIds: readonly string[],
  savedBefore: number,
): Promise<StrandedRun[]> {
  const summaries = await Promise.all(
    runIds.map((runId) => redis.hget(keys.run(runId), "summary")),
  );
  const idle: StrandedRun[] = [];
  for (const [at, json] of summaries.entries()) {
    const summary = json === null ? undefined : readSummary(runIds[at] as string, json);
    if (summary === undefined) continue; // a corrupt summary is reported elsewhere, not stepped
    const { runId, status, updatedAt } = summary;
    if (UNFINISHED.includes(status) && updatedAt < savedBefore) {
      idle.push({ runId, status, updatedAt });
    }
  }
  return idle;
}
