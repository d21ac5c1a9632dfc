import type { Logger } from "pino";
import { z } from "zod";
import type { RuntimeDeps } from "../core/deps.js";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { Agent } from "../engine/agent.js";
import type { EnqueueStepOptions, RunBackend } from "../store/backend.js";
import { describeIssues } from "../tools/validate.js";
import type { ApprovalRequestedListener } from "./approval-notifications.js";
import type { ApprovalWebhookOptions } from "./approval-webhook.js";
import { type RuntimeLimits, RuntimeLimitsSchema } from "./limits.js";

// AgentRuntime's options and the options of its calls, each with the schema that checks it.

export interface AgentRuntimeOptions {
  /** The agents this runtime submits and advances runs for, found by `config.name`. */
  agents: readonly Agent<unknown>[];
  /** @defaultValue memoryBackend() */
  backend?: RunBackend;
  /**
   * Jobs this process works on at once: run steps and tool calls, or one number for both. A
   * step waiting on its model holds no CPU, so many fit; tool handlers may use CPU.
   * @defaultValue { steps: 256, tools: 32 }
   */
  concurrency?: number | { steps?: number; tools?: number };
  /** @defaultValue pino on stderr at level `HARNESSX_LOG_LEVEL` or "warn", secret-named fields redacted */
  logger?: Logger;
  /** Clock and id generator; tests inject their own. */
  deps?: Partial<RuntimeDeps>;
  /** Size limits of inputs and tool results (1 MB each by default). */
  limits?: RuntimeLimits;
  /**
   * Called once for each call that starts waiting for a person, in the process whose worker
   * parked the run, with its input's secret fields redacted. Not awaited by the run; what it
   * throws is logged.
   */
  onApprovalRequested?: ApprovalRequestedListener;
  /**
   * POSTs each call that starts waiting (`ApprovalRequest` as JSON) to `url`, signed with
   * `x-harnessx-signature: sha256=<hex HMAC-SHA256 of the body>` and with an `idempotency-key`
   * (`runId:toolCallId`). A queued job (BullMQ on Redis: at least once, retried with exponential
   * backoff, survives a worker's crash); it never fails or delays the run.
   */
  approvalWebhook?: ApprovalWebhookOptions;
}

export interface StartOptions {
  /**
   * Run workers in this process; `false` only submits and reads runs.
   * @defaultValue true
   */
  workers?: boolean;
}

export interface SubmitOptions {
  /** @defaultValue a new UUID */
  sessionId?: string;
  /**
   * The run's priority, kept by every job of the run (BullMQ's: 1 is taken first, then 2, … up
   * to 2,097,152; runs without a priority are taken before any run with one).
   */
  priority?: number;
  /** Starts the run after this many milliseconds (a delayed job). @defaultValue 0 */
  delayMs?: number;
  /**
   * The run's id, chosen by the caller to submit idempotently: a submit with the id of a run
   * that exists already returns a handle to that run and stores nothing. Retry a rejected
   * submit with its `error.runId`. Not for `submitMany`. @defaultValue a new UUID
   */
  runId?: string;
}

/** The concurrency a runtime starts with when none is given (see `AgentRuntimeOptions`). */
export const DEFAULT_CONCURRENCY = { steps: 256, tools: 32 } as const;

const SubmitOptionsSchema = lazySchema(() =>
  z.strictObject({
    sessionId: z.string().min(1).optional(),
    priority: z.number().int().min(1).max(2_097_152).optional(),
    delayMs: z.number().int().nonnegative().optional(),
    runId: z.string().min(1).max(512).optional(),
  }),
);

export interface PruneOptions {
  /** Deletes the runs that finished (completed, failed or cancelled) before this time (ms). */
  finishedBefore: number;
}

export const PruneOptionsSchema = lazySchema(() => z.strictObject({ finishedBefore: z.number() }));

/** What `runtime.prune` did: runs deleted, and finished runs skipped as unreadable. */
export interface PruneResult {
  deleted: number;
  /** Finished runs whose stored summary cannot be read: kept; `runtime.delete(runId)` removes one. */
  unreadable: number;
}

/** What `runtime.deleteSession` deleted: the session's finished runs and saved state values. */
export interface DeleteSessionResult {
  runs: number;
  states: number;
}

/** `id` when it is a non-empty string; a `ConfigError` naming `method` otherwise. */
export function requireId(id: unknown, method: string): string {
  if (typeof id === "string" && id.length > 0) return id;
  throw new ConfigError(`${method}() needs a non-empty string id.`);
}

export const RuntimeOptionsSchema = lazySchema(() =>
  z.object({
    agents: z.array(z.instanceof(Agent)),
    backend: z.looseObject({ kind: z.enum(["memory", "redis"]) }).optional(),
    concurrency: z
      .union([
        z.number().int().positive(),
        z.strictObject({
          steps: z.number().int().positive().optional(),
          tools: z.number().int().positive().optional(),
        }),
      ])
      .optional(),
    logger: z.unknown().optional(),
    deps: z.unknown().optional(),
    limits: RuntimeLimitsSchema.optional(),
    onApprovalRequested: z
      .custom<ApprovalRequestedListener>(
        (value) => typeof value === "function",
        "must be a function",
      )
      .optional(),
    approvalWebhook: z
      .strictObject({
        url: z.url({
          protocol: /^https?$/,
          error: "must be an http: or https: URL",
        }),
        secret: z.string().min(16, "must be at least 16 characters"),
        timeoutMs: z.number().int().positive().optional(),
        attempts: z.number().int().min(1).max(100).optional(),
        backoffMs: z.number().int().positive().optional(),
      })
      .optional(),
  }),
);

export function parseSubmitOptions(options: SubmitOptions): SubmitOptions {
  const parsed = SubmitOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid submit options: ${describeIssues(parsed.error.issues)}`);
  }
  return options;
}

/** How a submitted run's first step is queued. */
export const stepOptions = (options: SubmitOptions): EnqueueStepOptions => ({
  ...(options.priority === undefined ? {} : { priority: options.priority }),
  ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
});

export const traceOf = (carrier: Record<string, string>) =>
  Object.keys(carrier).length === 0 ? {} : { trace: carrier };
