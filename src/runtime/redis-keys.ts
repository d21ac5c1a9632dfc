import { indexName, type RunIndex } from "../store/run-query.js";

/**
 * Names of the queues under the backend's prefix (BullMQ keys: `<prefix>:<queue>:…`), in a
 * `harnessx` namespace so that they say whose they are beside other applications' queues.
 */
export const STEP_QUEUE = "harnessx-steps";
export const TOOL_QUEUE = "harnessx-tools";
/** Approval notices: the approval webhook's deliveries, retried with backoff. */
export const NOTICE_QUEUE = "harnessx-notices";
/** The reconciler's queue: one repeatable job (`RECONCILER`) for every process of the prefix. */
export const MAINTENANCE_QUEUE = "harnessx-maintenance";
export const RECONCILER = "reconcile-runs";

/**
 * The Redis keys of the run store, all under one prefix so a prefix is one installation. Every
 * key starts with the prefix, so a prefix in braces (`{hx}`) puts them all in one cluster slot.
 */
export function redisKeys(prefix: string) {
  const runPrefix = `${prefix}:run:`;
  const indexPrefix = `${prefix}:idx:`;
  return {
    /** The prefix itself (the run tree's keys are built from it: redis/run-tree.ts). */
    prefix,
    /**
     * The run hash: `record`, `status`, `summary` (`RunSummary` JSON), `agent`, `raw`, `etrim`,
     * `cancelledBy` and `fence`, the counter of its lease's fencing tokens; and, for a run with
     * children, the run tree's fields (redis/tree-fields.ts: each child's state, and the count
     * of those running), which never start with a letter as the run's own fields do.
     */
    run: (runId: string) => `${runPrefix}${runId}`,
    runPrefix,
    /** Sorted sets of run ids scored by `createdAt`, one per `RunIndex` (see `indexName`). */
    index: (index: RunIndex) => `${indexPrefix}${indexName(index)}`,
    indexPrefix,
    /** Finished runs scored by when they finished (their last `updatedAt`), for pruning. */
    finished: `${indexPrefix}finished`,
    /** A run's audit trail: a list of `DecisionRecord` JSON, never expired with its data. */
    audit: (runId: string) => `${prefix}:audit:${runId}`,
    lease: (runId: string) => `${prefix}:lease:${runId}`,
    wake: (runId: string) => `${prefix}:wake:${runId}`,
    cancel: (runId: string) => `${prefix}:cancel:${runId}`,
    raw: (runId: string, iteration: number) => `${prefix}:raw:${runId}:${iteration}`,
    /** What `raw` puts before the iteration (the run hash's `raw` field holds the iteration). */
    rawOfRun: (runId: string) => `${prefix}:raw:${runId}:`,
    decisions: (runId: string, iteration: number) => `${prefix}:decisions:${runId}:${iteration}`,
    /** Approvals counted on the round's quorum calls (named with a `d`, as the run's data scan finds it). */
    quorum: (runId: string, iteration: number) => `${prefix}:dquorum:${runId}:${iteration}`,
    inFlight: (runId: string, iteration: number) => `${prefix}:inflight:${runId}:${iteration}`,
    events: (runId: string) => `${prefix}:events:${runId}`,
    /** The run's flight recording: one JSON entry an item, appended (see recording-codec). */
    recording: (runId: string) => `${prefix}:rec:${runId}`,
    /** One value of an extension's saved state, by `stateKeyOf` its address. */
    extensionState: (stateKey: string) => `${prefix}:xstate:${stateKey}`,
    /** The run's conversation: one JSON message an entry, appended, never rewritten. */
    messages: (runId: string) => `${prefix}:msgs:${runId}`,
    /** The run's timeline: one `StoredCheckpoint` JSON per save, appended by SAVE_RUN. */
    checkpoints: (runId: string) => `${prefix}:ckpt:${runId}`,
    /** A child run's `RunLink` JSON (SPEC §14); a root has none. */
    treeLink: (runId: string) => `${prefix}:tree:link:${runId}`,
    /**
     * A root's runs of depth 2 or more: a set of run ids (a root of a one-level tree has none).
     * A run's children are fields of its own run hash (`childField`, redis/tree-fields.ts).
     * This layout replaced a `tree:below:<runId>` hash per parent before any release (0.1.0,
     * untagged): no store holds those keys, so none is migrated.
     */
    treeDeep: (rootRunId: string) => `${prefix}:tree:deep:${rootRunId}`,
    /** The store marker (`StoreMarker`): names this store, so a store that lost it is noticed. */
    store: `${prefix}:store`,
    /** The pub/sub channel on which cancel requests reach the workers of every process. */
    cancelChannel: `${prefix}:cancels`,
    /** The pub/sub channel carrying each created or saved run's summary (`watchRuns`). */
    runsChannel: `${prefix}:runs`,
    /** Where model pauses (`rate_limited`) are announced to every process. */
    pauseChannel: `${prefix}:rl:paused`,
  };
}

/**
 * The keys of a finished run that expire after the retention period: its working data. Its
 * record (with its summary), conversation, checkpoints, index entries, audit trail and event log stay until
 * it is pruned: they are the run's history.
 */
export function retainedKeys(keys: RedisKeys, runId: string, iterations: number): string[] {
  const perRun = [keys.cancel(runId), keys.wake(runId)];
  for (let iteration = 1; iteration <= iterations; iteration += 1) {
    perRun.push(
      keys.raw(runId, iteration),
      keys.decisions(runId, iteration),
      keys.quorum(runId, iteration),
      keys.inFlight(runId, iteration),
    );
  }
  return perRun;
}
export type RedisKeys = ReturnType<typeof redisKeys>;

/** A part of a BullMQ job id: BullMQ refuses custom ids containing ":". */
export function jobIdPart(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate (ids are any string) has no URI encoding; its UTF-16 code units do.
    // "%7E" never comes out of encodeURIComponent ("~" is left as is), so the two never meet.
    return `%7E${Buffer.from(value, "utf16le").toString("base64url")}`;
  }
}

const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `value` with each lone surrogate (which UTF-8, and so Redis, cannot hold) made U+FFFD. */
export const wellFormed = (value: string): string => value.replace(LONE_SURROGATES, "\uFFFD");
const ENCODED_FIELD = "\u0000";

/**
 * The hash field of a call key (raw results, decisions, in-flight marks). Redis stores UTF-8,
 * in which a lone surrogate (ids are any string) has no form of its own: such a key, and any key
 * starting with the marker, is stored as the marker and its UTF-16 code units in base64url.
 */
export function callField(callKey: string): string {
  if (!callKey.startsWith(ENCODED_FIELD) && wellFormed(callKey) === callKey) return callKey;
  return `${ENCODED_FIELD}${Buffer.from(callKey, "utf16le").toString("base64url")}`;
}

/** The call key a hash field stands for (`callField` undone). */
export function callKeyOfField(field: string): string {
  if (!field.startsWith(ENCODED_FIELD)) return field;
  return Buffer.from(field.slice(ENCODED_FIELD.length), "base64url").toString("utf16le");
}
