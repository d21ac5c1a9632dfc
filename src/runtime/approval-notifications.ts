import type { Logger } from "pino";
import { loggableError } from "../core/errors.js";
import type { ApprovalNoticeJob, ApprovalRequest } from "../store/approval-request.js";
import type { RunBackend } from "../store/backend.js";
import type { JobProcessors, NoticeRetry } from "../store/job-queue.js";
import { type ApprovalWebhookOptions, postApprovalWebhook } from "./approval-webhook.js";

/** Called once, in the process that parked the run, for each call that starts waiting. */
export type ApprovalRequestedListener = (request: ApprovalRequest) => void | Promise<void>;

/**
 * A runtime's approval notifications (SPEC §7.1): for each call that starts waiting, the
 * listener runs in this process and a webhook notice is queued on the backend. Neither can fail
 * or hold up the run: a listener's error and a queue that refuses the notice are logged.
 */
export class ApprovalNotifications {
  readonly #listener: ApprovalRequestedListener | undefined;
  readonly #webhook: ApprovalWebhookOptions | undefined;
  readonly #retry: NoticeRetry;
  readonly #logger: Logger;

  constructor(options: {
    onApprovalRequested?: ApprovalRequestedListener | undefined;
    approvalWebhook?: ApprovalWebhookOptions | undefined;
    logger: Logger;
  }) {
    this.#listener = options.onApprovalRequested;
    this.#webhook = options.approvalWebhook;
    this.#retry = {
      attempts: options.approvalWebhook?.attempts ?? 10,
      backoffMs: options.approvalWebhook?.backoffMs ?? 1000,
    };
    this.#logger = options.logger;
  }

  /** Whether anything listens: without, workers skip looking for new requests. */
  get enabled(): boolean {
    return this.#listener !== undefined || this.#webhook !== undefined;
  }

  /**
   * The calls of `jobs` started waiting: tell the listener and queue their webhook notices. With
   * `again` (a redelivered step found them waiting), only the notices are queued again: a notice
   * job of the same call and round that is still queued is the same job.
   */
  async requested(
    backend: RunBackend,
    jobs: readonly ApprovalNoticeJob[],
    options: { again: boolean } = { again: false },
  ): Promise<void> {
    for (const job of jobs) {
      if (this.#listener !== undefined && !options.again) this.#tell(this.#listener, job.request);
      if (this.#webhook === undefined) continue;
      try {
        await backend.enqueueNotice(job, this.#retry);
      } catch (error) {
        this.#logger.error(
          {
            err: loggableError(error),
            runId: job.request.runId,
            toolCallId: job.request.toolCallId,
          },
          "could not queue the approval webhook's notice",
        );
      }
    }
  }

  /** The notice processor of this process's workers (none without a webhook). */
  processor(): Pick<JobProcessors, "notice"> {
    const webhook = this.#webhook;
    if (webhook === undefined) return {};
    return {
      notice: async (job, delivery) => {
        const { runId, toolCallId } = job.request;
        if (delivery.gaveUp !== undefined) {
          this.#logger.error(
            { runId, toolCallId, reason: delivery.gaveUp },
            "the approval webhook was not reached: notice given up",
          );
          return;
        }
        await postApprovalWebhook(webhook, job.request);
        this.#logger.info({ runId, toolCallId }, "approval webhook notified");
      },
    };
  }

  /** Runs the listener without waiting for it: what it throws or rejects with is logged. */
  #tell(listener: ApprovalRequestedListener, request: ApprovalRequest): void {
    const failed = (error: unknown) =>
      this.#logger.error(
        { err: loggableError(error), runId: request.runId, toolCallId: request.toolCallId },
        "onApprovalRequested failed",
      );
    try {
      Promise.resolve(listener(request)).catch(failed);
    } catch (error) {
      failed(error);
    }
  }
}
