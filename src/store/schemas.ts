import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import {
  JsonObject,
  Message,
  PendingApproval,
  RunResult,
  RunStatus,
  ToolCall,
  ToolResult,
} from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";

// Everything a backend stores or a queue carries, parsed with these schemas when read back.

/**
 * Where a durable run stands: `queued` (not started), `running`, `waiting` (at `dispatch` while
 * child runs it started run: SPEC §14; no worker holds it), or a `RunStatus`.
 */
export const RunRecordStatus = lazySchema(() =>
  z.union([z.enum(["queued", "running", "waiting"]), RunStatus]),
);
export type RunRecordStatus = z.infer<typeof RunRecordStatus>;

/**
 * Every `RunRecordStatus`: `queued`, `running`, `waiting`, then `RunStatus`'s in its order.
 * Written out, not read from `RunStatus.options`, so that importing the package builds no schema
 * (a test keeps the two lists equal).
 */
export const RUN_RECORD_STATUSES: readonly RunRecordStatus[] = [
  "queued",
  "running",
  "waiting",
  "completed",
  "failed",
  "cancelled",
  "awaiting_approval",
  "paused",
];

/** True when `value` names a `RunRecordStatus`. */
export const isRunRecordStatus = (value: string): value is RunRecordStatus =>
  (RUN_RECORD_STATUSES as readonly string[]).includes(value);

/** A status a run does not leave. */
export const isTerminal = (status: RunRecordStatus): boolean =>
  status === "completed" || status === "failed" || status === "cancelled";

/** What a queued run starts from. */
export const RunInput = lazySchema(() =>
  z.object({
    messages: z.array(Message).min(1),
    /** The input as submitted when it was a string (hooks see it as given, like a direct run's). */
    text: z.string().optional(),
    maxIterations: z.number().int().positive(),
  }),
);
export type RunInput = z.infer<typeof RunInput>;

/** The persisted XState snapshot of the run machine (`actor.getPersistedSnapshot()` as JSON). */
export const PersistedSnapshot = lazySchema(() =>
  z.looseObject({
    status: z.string(),
    value: z.string(),
    context: z.looseObject({}),
  }),
);
export type PersistedSnapshot = z.infer<typeof PersistedSnapshot>;

/**
 * The version of what a backend stores of a run. 2: a summary kept beside the record, time
 * indexes per status, agent and session, and an audit trail of decisions (1 had none of these,
 * so its runs would be missing from `list()`). 3: the stored document leaves out what loading
 * derives (a settled run's result, the ids its snapshot repeats) and the fencing counter moved
 * into the run's hash; version-2 records are read as version 3 (`parseRecordValue`). 4: the
 * document leaves out initial values and what the summary beside it holds, and the summary is
 * stored in a short form (`summary-codec.ts`), so that a parked run takes less than 3 KB of
 * Redis; versions 2 and 3 are read as version 4. Bump it whenever the stored shape changes.
 */
export const RUN_RECORD_VERSION = 5;

/**
 * One durable run as stored by a backend. `snapshot` is null until a worker has started it.
 * A record of another `schemaVersion` is refused (`StoreVersionError`, see `parseStoredRecord`).
 */
export const RunRecord = lazySchema(() =>
  z.object({
    schemaVersion: z.literal(RUN_RECORD_VERSION),
    runId: z.string().min(1),
    sessionId: z.string().min(1),
    agent: z.string().min(1),
    status: RunRecordStatus,
    /** The machine phase the run is in (its state value). */
    phase: z.string(),
    input: RunInput,
    snapshot: PersistedSnapshot.nullable(),
    /**
     * The run's conversation once a worker started it: its append-only message log, the input's
     * messages first, of which the snapshot's context counts its own (`messageCount`). The store
     * keeps it apart from the snapshot and appends to it; absent before the run started.
     */
    messages: z.array(Message).optional(),
    /** Set when the run finished or waits for approval; null while queued or running. */
    result: RunResult.nullable(),
    createdAt: z.number(),
    updatedAt: z.number(),
    /**
     * The trace context the run was submitted in (W3C `traceparent`…): every job of the run
     * starts its spans in it, so a durable run is one trace across processes.
     */
    trace: z.record(z.string(), z.string()).optional(),
    /** The run's queue priority (BullMQ's: 1 first); every job of the run is queued with it. */
    priority: z.number().int().positive().optional(),
    /**
     * The input fields the agent's tools mark secret, by tool name (paths of property names,
     * `"*"` for any item): stored with the run so that a process without the agent (the CLI, a
     * dashboard) still never shows them. Absent when no tool marks any.
     */
    secretInputs: z.record(z.string(), z.array(z.array(z.string()))).optional(),
    /**
     * A child run's place in its tree (SPEC §14), stored with it at creation so that its summary
     * and its approval notices name its root without reading the tree: the run whose call started
     * it, that call, and the tree's root. Absent on a root (and on children stored before these).
     */
    parentRunId: z.string().min(1).optional(),
    parentToolCallId: z.string().min(1).optional(),
    rootRunId: z.string().min(1).optional(),
  }),
);
export type RunRecord = z.infer<typeof RunRecord>;

/** The run's priority as queue options: every job of a run is queued with it. */
export const priorityOf = (record: Pick<RunRecord, "priority">): { priority?: number } =>
  record.priority === undefined ? {} : { priority: record.priority };

/** The parts of the machine context that runtime code reads from a snapshot. */
export const CallStateView = lazySchema(() =>
  z.object({
    call: ToolCall,
    status: z.enum(["invalid", "allowed", "denied", "asked", "approved", "rejected", "responded"]),
    reason: z.string(),
    inputHash: z.string().optional(),
    decidedBy: z.string().optional(),
    result: ToolResult.optional(),
    interruptions: z.number().int().positive().optional(),
    approvals: z
      .object({
        needed: z.number().int(),
        given: z.array(
          z.object({
            by: z.string(),
            at: z.number(),
            reason: z.string().nullable(),
            inputHash: z.string(),
            input: JsonObject.optional(),
          }),
        ),
      })
      .optional(),
    response: ToolResult.optional(),
  }),
);
export type CallStateView = z.infer<typeof CallStateView>;
export const SnapshotContextView = lazySchema(() =>
  z.looseObject({
    runId: z.string(),
    sessionId: z.string(),
    iteration: z.number().int().nonnegative(),
    calls: z.array(CallStateView),
    /** The agent the run is under after a handoff (absent: the record's). */
    agent: z.string().min(1).optional(),
  }),
);
export type SnapshotContextView = z.infer<typeof SnapshotContextView>;

/** A person's decision on one pending call, as recorded (first write wins). */
export const StoredDecision = lazySchema(() =>
  z.object({
    /** Unique per request: tells a re-sent write of our own decision from a rival's. */
    id: z.string().min(1),
    decision: z.enum(["allow", "deny", "respond"]),
    /** An allow's edited input: the handler runs with it. */
    input: JsonObject.optional(),
    /** A respond's answer: the call's result. */
    content: z.string().optional(),
    isError: z.boolean().optional(),
    reason: z.string().optional(),
    by: z.string().optional(),
    /** The `inputHash` of the call as it was asked; a decision applies only to that input. */
    inputHash: z.string().optional(),
    decidedAt: z.number(),
  }),
);
export type StoredDecision = z.infer<typeof StoredDecision>;

/**
 * Payload of a run-step job: advance this run as far as it can go. With `giveUp`, an earlier
 * step job of the run failed for good for that reason: this one fails the run instead, if the
 * run is still where a failed step leaves it (see `giveUpStep`).
 */
export const StepJob = lazySchema(() =>
  z.object({
    runId: z.string().min(1),
    /** The run's agent, to name the job on a queue view; jobs queued without it still parse. */
    agent: z.string().min(1).optional(),
    giveUp: z.string().min(1).optional(),
    /** The run's priority, passed on to the jobs this step queues. */
    priority: z.number().int().positive().optional(),
    /** Since when (ms) the run's model call has waited for its rate limit, across re-queued steps. */
    rateLimitedSince: z.number().optional(),
    /**
     * An approval timeout: the calls of `iteration` with these keys that are still undecided are
     * denied ("approval timed out", by harnessx) before the step advances the run.
     */
    approvalTimeout: z
      .object({ iteration: z.number().int().positive(), callKeys: z.array(z.string()).min(1) })
      .optional(),
  }),
);
export type StepJob = z.infer<typeof StepJob>;

/** The payload of a run's step job; with `giveUp`, a give-up step. */
export const stepJob = (
  runId: string,
  giveUp?: string,
  extra: Omit<StepJob, "runId" | "giveUp"> = {},
): StepJob => {
  const job: StepJob = giveUp === undefined ? { runId } : { runId, giveUp };
  if (extra.priority !== undefined) job.priority = extra.priority;
  if (extra.rateLimitedSince !== undefined) job.rateLimitedSince = extra.rateLimitedSince;
  if (extra.approvalTimeout !== undefined) job.approvalTimeout = extra.approvalTimeout;
  return job;
};

/** Payload of a tool-dispatch job: run one permitted call of one iteration. */
export const ToolJob = lazySchema(() =>
  z.object({
    runId: z.string().min(1),
    iteration: z.number().int().positive(),
    toolCallId: z.string().min(1),
    /** The run's agent and the call's tool, to name the job on a queue view (never the input). */
    agent: z.string().min(1).optional(),
    tool: z.string().min(1).optional(),
    /**
     * How many times a crash interrupted this call before and a person approved running it
     * again; each attempt is a job of its own. Absent means 0.
     */
    attempt: z.number().int().nonnegative().optional(),
    /** The run's priority (BullMQ's): the tool job is queued with it. */
    priority: z.number().int().positive().optional(),
  }),
);
export type ToolJob = z.infer<typeof ToolJob>;

/** A `RunEvent` read back from a stream. */
export const RunEventSchema = lazySchema(
  () =>
    z.discriminatedUnion("type", [
      z.object({ type: z.literal("text_delta"), text: z.string() }),
      z.object({ type: z.literal("thinking_delta"), text: z.string() }),
      z.object({ type: z.literal("tool_start"), toolCall: ToolCall }),
      z.object({ type: z.literal("tool_end"), toolCall: ToolCall, result: ToolResult }),
      z.object({ type: z.literal("approval_required"), pending: z.array(PendingApproval) }),
      z.object({
        type: z.literal("child_started"),
        childRunId: z.string(),
        agent: z.string(),
        toolCallId: z.string(),
      }),
      z.object({
        type: z.literal("child_finished"),
        childRunId: z.string(),
        agent: z.string(),
        toolCallId: z.string(),
        status: RunStatus,
      }),
      z.object({
        type: z.literal("result"),
        // A result event logged before results named their agent still ends its stream.
        result: RunResult.extend({ agent: z.string().default("") }),
      }),
    ]) satisfies z.ZodType<RunEvent>,
);

/** The last event of a durable run's stream: its final result (an approval wait is not final). */
export const endsStream = (event: RunEvent): boolean =>
  event.type === "result" && isTerminal(event.result.status);
