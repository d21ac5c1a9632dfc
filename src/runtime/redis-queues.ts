import { type Job, Queue, UnrecoverableError, Worker } from "bullmq";
import type { Logger } from "pino";
import type { z } from "zod";
import { jobMayRetry, loggableError, messageOf } from "../core/errors.js";
import type { JobDelivery } from "../store/backend.js";
import { describeIssues } from "../tools/validate.js";
import type { RedisClient } from "./redis-connection.js";

export interface QueueSettings {
  connection: RedisClient;
  prefix: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** How many times a job whose worker died is delivered again before it fails. */
  maxStalledCount: number;
  /** Finished jobs kept for inspection; older ones are removed. */
  keepCompleted: number;
  keepFailed: number;
}

/** A BullMQ queue with retention and retries set for harnessx jobs. */
export function createQueue(name: string, settings: QueueSettings): Queue {
  const queue = new Queue(name, {
    connection: settings.connection,
    prefix: settings.prefix,
    defaultJobOptions: {
      removeOnComplete: { count: settings.keepCompleted },
      removeOnFail: { count: settings.keepFailed },
      attempts: 3,
      backoff: { type: "exponential", delay: 100 },
    },
  });
  return queue;
}

/**
 * A BullMQ worker whose payloads are parsed at the edge: a malformed payload fails the job
 * with `UnrecoverableError` (no retry) and the worker carries on with other jobs, as does a
 * harnessx error whose code a retry cannot help (`jobMayRetry`). A job whose
 * worker died (its lock expired) is delivered again up to `maxStalledCount` times; that
 * re-delivery is how a crashed step or tool call is recovered.
 */
export function createWorker<T>(
  name: string,
  schema: z.ZodType<T>,
  process: (payload: T, delivery: JobDelivery) => Promise<unknown>,
  settings: QueueSettings & { concurrency: number; logger: Logger; workerName: string },
): Worker {
  const parse = (value: unknown) => schema.safeParse(value);
  const worker = new Worker(
    name,
    // No async function: a job in flight (a run held at its model call) keeps every suspended
    // frame on its way alive while it waits.
    (job: Job) => {
      const parsed = parse(job.data);
      if (!parsed.success) {
        return Promise.reject(
          new UnrecoverableError(
            `Malformed ${name} job "${job.id ?? "?"}": ${describeIssues(parsed.error.issues)}`,
          ),
        );
      }
      let running: Promise<unknown>;
      try {
        // What it resolves with is the job's return value: what the job left its run as.
        running = process(parsed.data, { redelivered: job.stalledCounter > 0 });
      } catch (error) {
        running = Promise.reject(error);
      }
      return running.catch(failedJob);
    },
    {
      connection: settings.connection,
      prefix: settings.prefix,
      concurrency: settings.concurrency,
      name: settings.workerName,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      maxStalledCount: settings.maxStalledCount,
      // After a lost connection, look for jobs again within a stalled interval (BullMQ: 15 s).
      runRetryDelay: Math.min(15_000, settings.stalledIntervalMs),
      // An idle worker waits for a queue's wake-up this long (seconds) before it looks again
      // (BullMQ: 5 s). A wake-up goes to one waiting worker, the one that waited longest: when
      // that worker's event loop is blocked, or it froze or died, the wake-up is lost with it,
      // and the job waits for another worker's next look. Within a stalled interval, as for
      // the job that worker held; BullMQ's 5 s with the default interval (lockDurationMs).
      drainDelay: Math.min(5, settings.stalledIntervalMs / 1000),
      autorun: true,
    },
  );
  // Without an "error" listener an EventEmitter error would crash the process.
  worker.on("error", (error) =>
    settings.logger.error({ err: loggableError(error), queue: name }, "worker error"),
  );
  worker.on("failed", (job, error) => {
    settings.logger.warn({ err: loggableError(error), queue: name, jobId: job?.id }, "job failed");
    if (job === undefined || !failedForGood(job, error)) return;
    // Its retries or re-deliveries ran out (a worker that dies on it every time ends here):
    // the processor settles what the job left unfinished, so that its run does not stay stuck.
    const parsed = parse(job.data);
    if (!parsed.success) return; // a malformed payload: nothing to settle
    process(parsed.data, { redelivered: true, gaveUp: error.message }).catch((failure: unknown) =>
      settings.logger.error(
        { err: loggableError(failure), queue: name, jobId: job.id },
        "giving a job up failed",
      ),
    );
  });
  return worker;
}

/**
 * True when a failed job will not run again: it threw `UnrecoverableError` (a payload that
 * does not parse, or a job stalled more than `maxStalledCount` times, which BullMQ fails that
 * way when a worker next takes it) or used its last attempt (BullMQ sets `finishedOn` then).
 */
/** A job's failure as the queue takes it: retried, or not (the one place a code says which). */
function failedJob(error: unknown): never {
  if (jobMayRetry(error)) throw error;
  throw new UnrecoverableError(messageOf(error));
}

function failedForGood(job: Job, error: Error): boolean {
  return (
    error instanceof UnrecoverableError ||
    error.name === "UnrecoverableError" ||
    typeof job.finishedOn === "number"
  );
}

/**
 * Closes workers: they take no more jobs and their active jobs may finish until `timeoutMs`.
 * True when they closed; false at the deadline, with jobs still running (BullMQ's close then
 * still waits for them, and a second, forced `close` only returns that same promise).
 */
export async function closeWorkers(
  workers: readonly Worker[],
  timeoutMs: number,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      Promise.all(workers.map((worker) => worker.close())).then(() => true),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
