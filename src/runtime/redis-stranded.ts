import { readSummary } from "../store/record/summary-codec.js";
import { isRunRecordStatus, isTerminal, type RunRecordStatus } from "../store/schemas.js";
import { childStatesOf, runningIn } from "./redis/tree-fields.js";
import type { RedisClient } from "./redis-connection.js";
import type { RedisKeys } from "./redis-keys.js";

/** A run that nothing is advancing: see `findStrandedRuns`. */
export interface StrandedRun {
  runId: string;
  status: RunRecordStatus;
  /** When it was last saved (ms since the epoch). */
  updatedAt: number;
  /**
   * The runs whose step moves it on, when not itself: for a `waiting` parent, its finished
   * children that did not wake it (a step of a finished child wakes its parent), and itself
   * when a child it waits for was never stored.
   */
  wake?: string[];
}

/** The statuses in which a run needs a job of its own to move on. */
const UNFINISHED: readonly RunRecordStatus[] = ["queued", "running"];
/** Index entries read per round trip. */
const CHUNK = 500;

/**
 * Runs left `queued` or `running` with no live lease that have not been saved for `idleMs`:
 * their job was lost (removed from the queue by hand, say) and nothing else would step them.
 * A `waiting` parent is not stranded while a child it waits for runs (its children are its
 * liveness); it is when every such child finished (or it waits for none) and no wake-up came,
 * or one was never stored. Reads the status indexes only, so its cost grows with the
 * unfinished runs, never with the runs stored; at most `limit` are returned.
 */
export async function findStrandedRuns(
  redis: RedisClient,
  keys: RedisKeys,
  options: { now: number; idleMs: number; limit: number },
): Promise<StrandedRun[]> {
  const stranded: StrandedRun[] = [];
  for (const status of [...UNFINISHED, "waiting" as const]) {
    const index = keys.index({ kind: "status", status });
    for (let start = 0; stranded.length < options.limit; start += CHUNK) {
      const runIds = await redis.zrange(index, start, start + CHUNK - 1);
      const idle = await idleRuns(redis, keys, runIds, options.now - options.idleMs);
      const leased = await Promise.all(idle.map((run) => redis.exists(keys.lease(run.runId))));
      const unleased = idle.filter((_run, at) => leased[at] === 0);
      if (status !== "waiting") stranded.push(...unleased);
      else {
        const woken = await Promise.all(unleased.map((run) => wakeOfWaiting(redis, keys, run)));
        stranded.push(...woken.flatMap((run) => (run === undefined ? [] : [run])));
      }
      if (runIds.length < CHUNK) break;
    }
  }
  return stranded.slice(0, options.limit);
}

/**
 * A waiting parent as a stranded run, with the runs to step, or undefined while a child it
 * waits for runs.
 */
async function wakeOfWaiting(
  redis: RedisClient,
  keys: RedisKeys,
  run: StrandedRun,
): Promise<StrandedRun | undefined> {
  const children = runningIn(await childStatesOf(redis, keys, run.runId));
  if (children.length === 0) return { ...run, wake: [run.runId] };
  const statuses = await Promise.all(children.map((id) => redis.hget(keys.run(id), "status")));
  const wake: string[] = [];
  let unstored = false;
  for (const [at, status] of statuses.entries()) {
    if (status === null) unstored = true;
    else if (!isRunRecordStatus(status))
      continue; // unreadable: reported elsewhere
    else if (!isTerminal(status)) return undefined;
    else wake.push(children[at] as string);
  }
  if (unstored) wake.push(run.runId);
  return wake.length === 0 ? undefined : { ...run, wake };
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
    if ((UNFINISHED.includes(status) || status === "waiting") && updatedAt < savedBefore) {
      idle.push({ runId, status, updatedAt });
    }
  }
  return idle;
}
