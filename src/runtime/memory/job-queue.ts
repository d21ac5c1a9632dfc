import type { Logger } from "pino";
import { loggableError } from "../../core/errors.js";
import type { ApprovalNoticeJob } from "../../store/approval-request.js";
import {
  type EnqueueStepOptions,
  type JobDelivery,
  type JobProcessors,
  type JobQueue,
  type NoticeRetry,
  type QueueConcurrency,
  queueConcurrency,
} from "../../store/job-queue.js";
import type { ModelLimiter } from "../../store/model-limiter.js";
import { callKey } from "../../store/run-view.js";
import { type RunRecord, type StepJob, stepJob, type ToolJob } from "../../store/schemas.js";
import { memoryModelLimiter } from "../model-limiter.js";
import { MemoryWorkQueue } from "./work-queue.js";

/** A notice job in memory, with its retry settings and the attempt it is on (1 first). */
interface MemoryNotice {
  job: ApprovalNoticeJob;
  retry: NoticeRetry;
  attempt: number;
}

/** Approval notices delivered at once in memory (each waits on its webhook, not on CPU). */
const NOTICE_CONCURRENCY = 16;

/**
 * The job queue in memory: a step queue and a tool queue worked by this process, and approval
 * notices retried with exponential backoff as a BullMQ job would be.
 */
export class MemoryJobQueue implements JobQueue {
  readonly #steps = new MemoryWorkQueue<StepJob>();
  readonly #tools = new MemoryWorkQueue<ToolJob>();
  readonly #notices = new MemoryWorkQueue<MemoryNotice>();
  readonly #limiter = memoryModelLimiter();
  readonly #createRun: (record: RunRecord) => Promise<boolean>;

  constructor(options: { createRun: (record: RunRecord) => Promise<boolean> }) {
    this.#createRun = options.createRun;
  }

  /** Starts working both queues with `processors`. */
  work(processors: JobProcessors, concurrency: number | QueueConcurrency, logger: Logger): void {
    // In memory a job that threw is not retried: it is given up at once, as a Redis job is
    // once its attempts ran out, so that its run does not wait for it forever.
    const failed =
      <T>(queue: string, process: (job: T, delivery: JobDelivery) => Promise<unknown>) =>
      (job: T, error: unknown) => {
        logger.warn({ err: loggableError(error), job, queue }, "job failed");
        const reason = error instanceof Error ? error.message : String(error);
        process(job, { redelivered: true, gaveUp: reason }).catch((failure: unknown) =>
          logger.error({ err: loggableError(failure), job, queue }, "giving a job up failed"),
        );
      };
    const step = processors.step.bind(processors);
    const tool = processors.tool.bind(processors);
    const perQueue = queueConcurrency(concurrency);
    this.#steps.work(
      async (job) => {
        await step(job, { redelivered: false });
      },
      perQueue.steps,
      failed("steps", step),
    );
    this.#tools.work(
      async (job) => {
        await tool(job, { redelivered: false });
      },
      perQueue.tools,
      failed("tools", tool),
    );
    const notice = processors.notice?.bind(processors);
    if (notice !== undefined) this.#workNotices(notice, logger);
  }

  #workNotices(notice: NonNullable<JobProcessors["notice"]>, logger: Logger): void {
    this.#notices.work(
      (entry) => notice(entry.job, { redelivered: false }),
      NOTICE_CONCURRENCY,
      (entry, error) => {
        const { job, retry, attempt } = entry;
        if (attempt < retry.attempts) {
          logger.info(
            { err: loggableError(error), job, attempt },
            "approval notice will be retried",
          );
          const delayMs = retry.backoffMs * 2 ** (attempt - 1);
          this.#notices.add({ job, retry, attempt: attempt + 1 }, { delayMs });
          return;
        }
        logger.warn({ err: loggableError(error), job, queue: "notices" }, "job failed");
        const reason = error instanceof Error ? error.message : String(error);
        notice(job, { redelivered: true, gaveUp: reason }).catch((failure: unknown) =>
          logger.error({ err: loggableError(failure), job }, "giving a job up failed"),
        );
      },
    );
  }

  /** Stops both queues, waiting up to `timeoutMs` in all; false when jobs were still running. */
  async close(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const stepsDrained = await this.#steps.close(timeoutMs);
    const toolsDrained = await this.#tools.close(Math.max(0, deadline - Date.now()));
    const noticesDrained = await this.#notices.close(Math.max(0, deadline - Date.now()));
    return stepsDrained && toolsDrained && noticesDrained;
  }

  async submitRun(record: RunRecord, options: EnqueueStepOptions = {}): Promise<boolean> {
    return (await this.submitRuns([record], options)).length === 0;
  }

  async submitRuns(
    records: readonly RunRecord[],
    options: EnqueueStepOptions = {},
  ): Promise<string[]> {
    const existing: string[] = [];
    for (const record of records) {
      if (!(await this.#createRun(record))) {
        existing.push(record.runId);
        continue;
      }
      const priority = record.priority === undefined ? {} : { priority: record.priority };
      await this.enqueueStep(record.runId, { ...options, ...priority });
    }
    return existing;
  }

  async enqueueStep(runId: string, options: EnqueueStepOptions = {}): Promise<void> {
    const { giveUp, delayMs, priority, jobId, ...extra } = options;
    this.#steps.add(
      stepJob(runId, giveUp, { ...extra, ...(priority === undefined ? {} : { priority }) }),
      {
        ...(delayMs === undefined ? {} : { delayMs }),
        ...(priority === undefined ? {} : { priority }),
        ...(jobId === undefined ? {} : { key: jobId }),
      },
    );
  }

  async enqueueTool(job: ToolJob): Promise<void> {
    const key = callKey({ call: { id: job.toolCallId }, interruptions: job.attempt });
    this.#tools.add(
      { ...job },
      {
        key: JSON.stringify([job.runId, job.iteration, key]),
        ...(job.priority === undefined ? {} : { priority: job.priority }),
      },
    );
  }

  modelLimiter(): ModelLimiter {
    return this.#limiter;
  }

  async enqueueNotice(job: ApprovalNoticeJob, retry: NoticeRetry): Promise<void> {
    // One job per call and round while it waits or runs, as a BullMQ job id (its retries are
    // queued by the failure handler, while the key is still held, so they go without one).
    const key = JSON.stringify([job.request.runId, job.round]);
    this.#notices.add({ job, retry, attempt: 1 }, { key });
  }
}
