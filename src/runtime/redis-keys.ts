import type { RunRecordStatus } from "../store/schemas.js";

/** Names of the queues under the backend's prefix (BullMQ keys: `<prefix>:<queue>:…`). */
export const STEP_QUEUE = "steps";
export const TOOL_QUEUE = "tools";

/** The Redis keys of the run store, all under one prefix so a prefix is one installation. */
export function redisKeys(prefix: string) {
  const statusPrefix = `${prefix}:runs:`;
  return {
    statusPrefix,
    run: (runId: string) => `${prefix}:run:${runId}`,
    byStatus: (status: RunRecordStatus) => `${statusPrefix}${status}`,
    lease: (runId: string) => `${prefix}:lease:${runId}`,
    fence: (runId: string) => `${prefix}:fence:${runId}`,
    wake: (runId: string) => `${prefix}:wake:${runId}`,
    cancel: (runId: string) => `${prefix}:cancel:${runId}`,
    raw: (runId: string, iteration: number) => `${prefix}:raw:${runId}:${iteration}`,
    decisions: (runId: string, iteration: number) => `${prefix}:decisions:${runId}:${iteration}`,
    inFlight: (runId: string, iteration: number) => `${prefix}:inflight:${runId}:${iteration}`,
    events: (runId: string) => `${prefix}:events:${runId}`,
    /** The run's conversation: one JSON message an entry, appended, never rewritten. */
    messages: (runId: string) => `${prefix}:msgs:${runId}`,
    /** The pub/sub channel on which cancel requests reach the workers of every process. */
    cancelChannel: `${prefix}:cancels`,
  };
}

/**
 * The keys of a finished run that expire after the retention period: its working data. Its
 * record, its place in the indexes and its event log stay: they are the run's history.
 */
export function retainedKeys(keys: RedisKeys, runId: string, iterations: number): string[] {
  const perRun = [keys.fence(runId), keys.cancel(runId), keys.wake(runId)];
  for (let iteration = 1; iteration <= iterations; iteration += 1) {
    perRun.push(
      keys.raw(runId, iteration),
      keys.decisions(runId, iteration),
      keys.inFlight(runId, iteration),
    );
  }
  return perRun;
}
export type RedisKeys = ReturnType<typeof redisKeys>;

/** A part of a BullMQ job id: BullMQ refuses custom ids containing ":". */
export const jobIdPart = (value: string): string => encodeURIComponent(value);
