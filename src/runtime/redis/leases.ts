import type { HeldToken, LeaseOutcome, Leases } from "../../store/leases.js";
import { joinRecord } from "../../store/record/decode.js";
import { contextView } from "../../store/run-view.js";
import { Cluster } from "../load-ioredis.js";
import {
  ACQUIRE_LEASE,
  RELEASE_LEASE,
  RENEW_LEASE,
  RENEW_LEASES,
  REQUEST_CANCEL,
} from "../redis-scripts.js";
import type { RedisContext } from "./context.js";
import { parseLeaseReply, rawResultsOf, storedSummary } from "./replies.js";

// Leases renewed by one script call: a few thousand keep Redis busy for a millisecond or two.
const RENEWAL_BATCH = 2000;

/**
 * Leases in Redis: the lease key with its fencing counter in the run hash, a wake-up key for the
 * holder, and the cancel key (announced on the cancel channel). Taking a lease reads the run,
 * its cancel flag and, at `dispatch`, its committed raw results in the same script call.
 */
export class RedisLeases implements Leases {
  readonly lockDurationMs: number;
  readonly #context: RedisContext;

  constructor(context: RedisContext) {
    this.#context = context;
    this.lockDurationMs = context.lockDurationMs;
  }

  async acquireLease(runId: string): Promise<LeaseOutcome> {
    const { redis, keys, marker, where } = this.#context;
    const reply = parseLeaseReply(
      await ACQUIRE_LEASE.run(
        redis,
        [
          keys.lease(runId),
          keys.wake(runId),
          keys.run(runId),
          keys.cancel(runId),
          keys.messages(runId),
        ],
        [this.lockDurationMs, keys.indexPrefix, runId, keys.runsChannel, keys.rawOfRun(runId)],
      ),
    );
    if (reply[0] === 0) return { acquired: false, remainingMs: Math.max(0, reply[1]) };
    const [, token, cancelled, document, flatRaw, messages, summary] = reply;
    if (document === "") await marker.assertKept(where);
    const record =
      document === "" ? undefined : joinRecord(document, messages, storedSummary(runId, summary));
    const iteration = record?.phase === "dispatch" ? contextView(record)?.iteration : undefined;
    const results = rawResultsOf(runId, flatRaw);
    return {
      acquired: true,
      token,
      opened: {
        record,
        cancelRequested: cancelled === 1,
        ...(iteration === undefined ? {} : { raw: { iteration, results } }),
      },
    };
  }

  async renewLease(runId: string, token: number): Promise<boolean> {
    const { redis, keys } = this.#context;
    const renewed = await RENEW_LEASE.run(redis, [keys.lease(runId)], [token, this.lockDurationMs]);
    return renewed === 1;
  }

  async renewLeases(leases: readonly HeldToken[]): Promise<boolean[]> {
    const { redis, keys } = this.#context;
    // A cluster spreads runs over slots (a prefix without braces): one command per lease,
    // pipelined by node. On one Redis, one script per batch of leases.
    if (redis instanceof Cluster) {
      return Promise.all(leases.map(({ runId, token }) => this.renewLease(runId, token)));
    }
    const renewed: boolean[] = [];
    for (let start = 0; start < leases.length; start += RENEWAL_BATCH) {
      const batch = leases.slice(start, start + RENEWAL_BATCH);
      const replies = (await RENEW_LEASES.run(
        redis,
        batch.map(({ runId }) => keys.lease(runId)),
        [this.lockDurationMs, ...batch.map(({ token }) => token)],
      )) as number[];
      for (const reply of replies) renewed.push(reply === 1);
    }
    return renewed;
  }

  async releaseLease(runId: string, token: number): Promise<{ wake: boolean }> {
    const { redis, keys } = this.#context;
    const woken = await RELEASE_LEASE.run(redis, [keys.lease(runId), keys.wake(runId)], [token]);
    return { wake: woken === 1 };
  }

  async requestCancel(runId: string, by?: string): Promise<void> {
    const { redis, keys, retentionMs } = this.#context;
    await REQUEST_CANCEL.run(
      redis,
      [keys.cancel(runId), keys.run(runId)],
      [retentionMs, keys.cancelChannel, runId, by ?? ""],
    );
  }

  async cancelledBy(runId: string): Promise<string | undefined> {
    const { redis, keys } = this.#context;
    return (await redis.hget(keys.run(runId), "cancelledBy")) ?? undefined;
  }

  async cancelRequested(runId: string): Promise<boolean> {
    const { redis, keys } = this.#context;
    return (await redis.exists(keys.cancel(runId))) === 1;
  }
}
