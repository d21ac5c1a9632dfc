import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { describeIssues } from "../tools/validate.js";
import { isTerminal, RUN_RECORD_STATUSES, type RunRecordStatus } from "./schemas.js";
import type { RunSummary } from "./summary.js";

// The overview's counters (SPEC §12.1): kept per time bucket as runs are written, so that
// reading a window costs its buckets, never a scan of runs. Every counter of a run lives in the
// bucket of the run's `createdAt`: a window holds the runs created in it — their statuses now,
// their agents and, once finished, their tokens and failure codes.

/** The windows an overview covers. */
export const OVERVIEW_WINDOWS = ["1h", "24h", "7d"] as const;
export type OverviewWindow = (typeof OVERVIEW_WINDOWS)[number];

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** A bucket size: its name in keys, its length, and how long its counters are kept. */
export interface BucketSize {
  readonly name: "m" | "h";
  readonly ms: number;
  readonly keepMs: number;
}

/** Minute buckets for the last hour, hour buckets for the day and the week; both written. */
export const BUCKET_SIZES: readonly BucketSize[] = [
  { name: "m", ms: MINUTE_MS, keepMs: 2 * HOUR_MS },
  { name: "h", ms: HOUR_MS, keepMs: 8 * 24 * HOUR_MS },
];

const WINDOW_BUCKETS: Record<OverviewWindow, { size: BucketSize; count: number }> = {
  "1h": { size: BUCKET_SIZES[0] as BucketSize, count: 60 },
  "24h": { size: BUCKET_SIZES[1] as BucketSize, count: 24 },
  "7d": { size: BUCKET_SIZES[1] as BucketSize, count: 7 * 24 },
};

/** A bucket's name, the tail of its key: size and number (`h:493012`). */
export const bucketName = (size: BucketSize, at: number): string =>
  `${size.name}:${Math.floor(at / size.ms)}`;

/** The buckets a window reads at `now`: the last whole buckets up to and with the current one. */
export function windowBuckets(window: OverviewWindow, now: number): string[] {
  const { size, count } = WINDOW_BUCKETS[window];
  const current = Math.floor(now / size.ms);
  return Array.from({ length: count }, (_, at) => `${size.name}:${current - at}`);
}

/** One counter's change: a field of the run's buckets and by how much. */
export interface CounterChange {
  field: string;
  by: number;
}

/**
 * A bucket's fields: `status:<status>`, `runs:<agent>`, `in:`/`out:`/`cr:`/`cw:<agent>` (input,
 * output, cache-read and cache-write tokens), `failed:<code>`. The Redis scripts write the same
 * fields (redis-overview-lua.ts); no prefix holds a ":", so a name after it may.
 */
const USAGE_FIELDS = [
  ["in", "inputTokens"],
  ["out", "outputTokens"],
  ["cr", "cacheReadTokens"],
  ["cw", "cacheWriteTokens"],
] as const;

type Counted = Pick<RunSummary, "agent" | "status" | "usage" | "error">;

/**
 * The counters a write changes in the run's buckets, given the run as stored before it
 * (undefined on its first write): a new run counts once for its agent; a status change moves
 * it from the old status's count to the new one's; a run that finishes adds its tokens, and
 * its error's code when it failed.
 */
export function counterChanges(previous: Counted | undefined, next: Counted): CounterChange[] {
  if (previous !== undefined && previous.status === next.status) return [];
  const changes: CounterChange[] = [];
  if (previous === undefined) changes.push({ field: `runs:${next.agent}`, by: 1 });
  else changes.push({ field: `status:${previous.status}`, by: -1 });
  changes.push({ field: `status:${next.status}`, by: 1 });
  if (isTerminal(next.status) && (previous === undefined || !isTerminal(previous.status))) {
    for (const [prefix, key] of USAGE_FIELDS) {
      if (next.usage[key] > 0)
        changes.push({ field: `${prefix}:${next.agent}`, by: next.usage[key] });
    }
    if (next.status === "failed" && next.error !== null) {
      changes.push({ field: `failed:${next.error.code}`, by: 1 });
    }
  }
  return changes;
}

/** Token counts and runs of one agent over a window. */
export interface AgentUsage {
  runs: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** `runtime.overview()`: SPEC §12.1's `/api/overview`. */
export interface Overview {
  /** The runs created in the window, by their status now (every status, 0 when none). */
  counts: Record<RunRecordStatus, number>;
  /**
   * Runs waiting for a person now (whatever the window), and since when the one waiting
   * longest has waited (ms since the epoch; null when none waits).
   */
  approvals: { waiting: number; oldestSince: number | null };
  /** The runs created in the window, by agent, with the tokens of those that finished. */
  usage: { byAgent: Record<string, AgentUsage> };
  /** The runs created in the window that failed, by their error's code. */
  failures: { byCode: Record<string, number> };
}

/** What a backend reads for an overview. */
export interface OverviewQuery {
  window: OverviewWindow;
  /** The time the window ends at (ms since the epoch). */
  now: number;
}

const emptyUsage = (): AgentUsage => ({
  runs: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

const USAGE_KEYS: Record<string, keyof AgentUsage> = {
  runs: "runs",
  ...Object.fromEntries(USAGE_FIELDS.map(([prefix, key]) => [prefix, key])),
};

/** Sums a window's buckets (field → count, as stored) into an overview. */
export function overviewOf(
  buckets: ReadonlyArray<Readonly<Record<string, number>>>,
  approvals: Overview["approvals"],
): Overview {
  const counts = Object.fromEntries(RUN_RECORD_STATUSES.map((status) => [status, 0])) as Record<
    RunRecordStatus,
    number
  >;
  const byAgent: Record<string, AgentUsage> = {};
  const byCode: Record<string, number> = {};
  for (const bucket of buckets) {
    for (const [field, value] of Object.entries(bucket)) {
      const split = field.indexOf(":");
      const prefix = field.slice(0, split);
      const name = field.slice(split + 1);
      if (split < 0 || !Number.isFinite(value)) continue;
      if (prefix === "status") {
        const status = RUN_RECORD_STATUSES.find((each) => each === name);
        if (status !== undefined) counts[status] += value;
      } else if (prefix === "failed") {
        byCode[name] = (byCode[name] ?? 0) + value;
      } else {
        const key = USAGE_KEYS[prefix];
        if (key === undefined) continue;
        const usage = byAgent[name] ?? emptyUsage();
        usage[key] += value;
        byAgent[name] = usage;
      }
    }
  }
  // A run stored before the counters were kept counts -1 for the status it leaves: never below 0.
  for (const status of RUN_RECORD_STATUSES) counts[status] = Math.max(0, counts[status]);
  return { counts, approvals, usage: { byAgent }, failures: { byCode } };
}

/** A run waiting for a person, as its status index holds it: created then, last written then. */
export interface WaitingRun {
  createdAt: number;
  /** When it parked (the `since` of its calls in the inbox). */
  updatedAt: number;
}

/**
 * The oldest wait among runs read in order of creation (as the `awaiting_approval` index holds
 * them), without a set of its own: a run parks after it is created, so once a run was created
 * at or after the oldest wait found so far, neither it nor any later one waits longer.
 * `settled` is false when the runs read ended first: the caller reads the next ones.
 */
export function oldestWait(
  runs: Iterable<WaitingRun>,
  found: number | null = null,
): { oldest: number | null; settled: boolean } {
  let oldest = found;
  for (const run of runs) {
    if (oldest !== null && run.createdAt >= oldest) return { oldest, settled: true };
    if (oldest === null || run.updatedAt < oldest) oldest = run.updatedAt;
  }
  return { oldest, settled: false };
}

/** What `runtime.overview()` accepts. */
export interface OverviewOptions {
  /**
   * The window: the last hour (minute buckets), day or week (hour buckets).
   * @defaultValue "24h"
   */
  window?: OverviewWindow | undefined;
}

const OverviewOptionsSchema = lazySchema(() =>
  z.strictObject({ window: z.enum(OVERVIEW_WINDOWS).optional() }),
);

/** Parses `runtime.overview()` options (`window` default `24h`); throws `ConfigError`. */
export function parseOverviewOptions(options: unknown): { window: OverviewWindow } {
  const parsed = OverviewOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    throw new ConfigError(`Invalid overview options: ${describeIssues(parsed.error.issues)}`);
  }
  return { window: parsed.data.window ?? "24h" };
}
