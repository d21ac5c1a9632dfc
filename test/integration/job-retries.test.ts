// The worker edge reads one table (`jobMayRetry`) to tell BullMQ which failures to try again:
// a job that threw a code a retry cannot help is given up after its first attempt; any other
// throw is retried up to the queue's attempts, then given up.
import type { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { HarnessError, type HarnessErrorCode } from "../../src/core/errors.js";
import { createQueue, createWorker, type QueueSettings } from "../../src/runtime/redis-queues.js";
import type { JobDelivery } from "../../src/store/backend.js";
import { silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const closing: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const Payload = z.object({ name: z.string() });

/**
 * A queue and a worker whose processor throws `thrown` on every attempt; resolves with every
 * delivery the processor saw once the job was given up (the delivery that carries `gaveUp`).
 */
async function deliveriesUntilGivenUp(thrown: () => unknown): Promise<JobDelivery[]> {
  const prefix = uniquePrefix();
  const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
  closing.push(async () => {
    await deletePrefix(prefix);
    connection.disconnect();
  });
  const settings: QueueSettings = {
    connection,
    prefix,
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
    maxStalledCount: 1,
    keepCompleted: 10,
    keepFailed: 10,
  };
  const deliveries: JobDelivery[] = [];
  let givenUp = (): void => {};
  const gaveUp = new Promise<void>((resolve) => {
    givenUp = resolve;
  });
  const queue: Queue = createQueue("retries", settings);
  closing.push(() => queue.close());
  const worker: Worker = createWorker(
    "retries",
    Payload,
    async (_payload, delivery) => {
      deliveries.push(delivery);
      if (delivery.gaveUp !== undefined) {
        givenUp();
        return undefined;
      }
      throw thrown();
    },
    { ...settings, concurrency: 1, logger: silent, workerName: "retries-test" },
  );
  closing.push(() => worker.close());
  await queue.add("job", { name: "one" });
  await gaveUp;
  return deliveries;
}

describe("which failed jobs a worker retries", () => {
  it.each<HarnessErrorCode>(["record_corrupt", "config_invalid", "internal_error"])(
    "a job that threw %s is given up after one attempt, with the error's message",
    async (code) => {
      const deliveries = await deliveriesUntilGivenUp(
        () => new HarnessError(code, `It failed with ${code}.`),
      );

      expect(deliveries).toEqual([
        { redelivered: false },
        { redelivered: true, gaveUp: `It failed with ${code}.` },
      ]);
    },
  );

  it.each<HarnessErrorCode>(["backend_failed", "backend_unavailable"])(
    "a job that threw %s is tried again up to its attempts",
    async (code) => {
      const deliveries = await deliveriesUntilGivenUp(() => new HarnessError(code, "Not now."));

      expect(deliveries).toEqual([
        { redelivered: false },
        { redelivered: false },
        { redelivered: false },
        { redelivered: true, gaveUp: "Not now." },
      ]);
    },
  );

  it("a job that threw something not a harnessx error is tried again up to its attempts", async () => {
    const deliveries = await deliveriesUntilGivenUp(() => new Error("socket closed"));

    expect(deliveries.filter((delivery) => delivery.gaveUp === undefined)).toHaveLength(3);
    expect(deliveries.at(-1)).toEqual({ redelivered: true, gaveUp: "socket closed" });
  });
});
