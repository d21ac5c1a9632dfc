import {
  BUCKET_SIZES,
  type BucketSize,
  bucketName,
  counterChanges,
  type Overview,
  type OverviewQuery,
  overviewOf,
  windowBuckets,
} from "../../store/overview.js";
import type { RunSummary } from "../../store/summary.js";

/**
 * The overview's counters in memory, as Redis keeps them (redis-overview-lua.ts): a map of
 * field → count per bucket, and the runs waiting for a person by when they parked.
 */
export class MemoryOverviewCounters {
  readonly #buckets = new Map<string, Map<string, number>>();
  /** Runs awaiting approval: since when (their `updatedAt`, as the inbox and Redis read it). */
  readonly #waiting = new Map<string, number>();

  /** Counts a write of `next`, stored before as `previous` (undefined on its first write). */
  count(previous: RunSummary | undefined, next: RunSummary): void {
    if (next.status === "awaiting_approval") this.#waiting.set(next.runId, next.updatedAt);
    else this.#waiting.delete(next.runId);
    const changes = counterChanges(previous, next);
    if (changes.length === 0) return;
    for (const size of BUCKET_SIZES) {
      const name = bucketName(size, next.createdAt);
      let bucket = this.#buckets.get(name);
      if (bucket === undefined) {
        bucket = new Map<string, number>();
        this.#buckets.set(name, bucket);
        this.#dropOlderThan(next.createdAt - size.keepMs, size);
      }
      for (const { field, by } of changes) bucket.set(field, (bucket.get(field) ?? 0) + by);
    }
  }

  /** Drops the buckets of a size older than `time` (Redis expires them). */
  #dropOlderThan(time: number, size: BucketSize): void {
    const first = Math.floor(time / size.ms);
    for (const name of this.#buckets.keys()) {
      if (name.startsWith(`${size.name}:`) && Number(name.slice(2)) < first) {
        this.#buckets.delete(name);
      }
    }
  }

  /** A run is deleted: it waits no more (its counts stay, as history). */
  forget(runId: string): void {
    this.#waiting.delete(runId);
  }

  read(query: OverviewQuery): Overview {
    const buckets = windowBuckets(query.window, query.now).flatMap((name) => {
      const bucket = this.#buckets.get(name);
      return bucket === undefined ? [] : [Object.fromEntries(bucket)];
    });
    let oldestSince: number | null = null;
    for (const since of this.#waiting.values()) {
      if (oldestSince === null || since < oldestSince) oldestSince = since;
    }
    return overviewOf(buckets, { waiting: this.#waiting.size, oldestSince });
  }
}
