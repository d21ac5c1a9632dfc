import type { RunRecordStatus } from "./schemas.js";

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
    events: (runId: string) => `${prefix}:events:${runId}`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;

/** A part of a BullMQ job id: BullMQ refuses custom ids containing ":". */
export const jobIdPart = (value: string): string => encodeURIComponent(value);
