import { z } from "zod";
import { lazySchema } from "../../core/lazy-schema.js";
import {
  type Overview,
  type OverviewQuery,
  oldestWait,
  overviewOf,
  type WaitingRun,
  windowBuckets,
} from "../../store/overview.js";
import { readSummary } from "../../store/record/summary-codec.js";
import { READ_OVERVIEW } from "../redis-index-scripts.js";
import type { RedisContext } from "./context.js";

/** READ_OVERVIEW's reply: waiting runs, {run id, createdAt, summary} flat, each bucket's fields. */
const OverviewReply = lazySchema(() =>
  z.tuple([z.number(), z.array(z.string())]).rest(z.array(z.string())),
);
/** Waiting runs read per round trip while looking for the oldest wait (usually the first few). */
const WAITING_BATCH = 64;

/**
 * The overview on Redis in one round trip: the window's buckets, the waiting runs' count, and
 * the first waiting runs by creation, read on (more round trips) only until `oldestWait` settles.
 */
export async function readOverview(context: RedisContext, query: OverviewQuery): Promise<Overview> {
  const { redis, keys } = context;
  const awaiting = keys.index({ kind: "status", status: "awaiting_approval" });
  const read = async (first: number, buckets: string[]) =>
    OverviewReply.parse(
      await READ_OVERVIEW.run(
        redis,
        [awaiting],
        [keys.indexPrefix, keys.runPrefix, String(first), String(WAITING_BATCH), ...buckets],
      ),
    );
  const [waiting, runs, ...buckets] = await read(0, windowBuckets(query.window, query.now));
  let found = oldestWait(waitingRuns(runs));
  for (let first = WAITING_BATCH; !found.settled && first < waiting; first += WAITING_BATCH) {
    const [, more] = await read(first, []);
    found = oldestWait(waitingRuns(more), found.oldest);
  }
  return overviewOf(
    buckets.map((flat) => {
      const counters: Record<string, number> = {};
      for (let at = 0; at + 1 < flat.length; at += 2) {
        counters[flat[at] as string] = Number(flat[at + 1]);
      }
      return counters;
    }),
    { waiting, oldestSince: found.oldest },
  );
}

/**
 * The waiting runs of a reply, in order of creation. A run whose summary is gone or does not
 * read counts as waiting since it was created: never later than it parked.
 */
function* waitingRuns(flat: readonly string[]): Generator<WaitingRun> {
  for (let at = 0; at + 2 < flat.length; at += 3) {
    const createdAt = Number(flat[at + 1]);
    const summary = readSummary(flat[at] as string, flat[at + 2] as string);
    yield { createdAt, updatedAt: summary?.updatedAt ?? createdAt };
  }
}
