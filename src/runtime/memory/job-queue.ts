import type { Logger } from "pino";
import { loggableError } from "../../core/errors.js";
import {
  type EnqueueStepOptions,
  type JobDelivery,
  type JobProcessors,
  type JobQueue,
  type QueueConcurrency,
  queueConcurrency,
} from "../../store/job-queue.js";
import type { ModelLimiter } from "../../store/model-limiter.js";
import { callKey } from "../../store/run-view.js";
import { type RunRecord, type StepJob, stepJob, type ToolJob } from "../../store/schemas.js";
import { memoryModelLimiter } from "../model-limiter.js";
import { MemoryWorkQueue } from "./work-queue.js";

/** The job queue in memory: a step queue and a tool queue worked by this process. */
export class MemoryJobQueue implements JobQueue {
  readonly #steps = new MemoryWorkQueue<StepJob>();
  readonly #tools = new MemoryWorkQueue<ToolJob>();
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
  }

  /** Stops both queues, waiting up to `timeoutMs` in all; false when jobs were still running. */
  async close(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const stepsDrained = await this.#steps.close(timeoutMs);
    const toolsDrained = await this.#tools.close(Math.max(0, deadline - Date.now()));
    return stepsDrained && toolsDrained;
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
}
