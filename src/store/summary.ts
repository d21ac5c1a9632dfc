import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import { emptyUsage, Message, PendingApproval, RunError, Usage } from "../core/values.js";
import { redactToolInputs } from "../tools/secret-inputs.js";
import type { StoredCheckpoint } from "./checkpoint.js";
import { conversationOf } from "./conversation.js";
import { liveContext } from "./live-context.js";
import { type RunRecord, RunRecordStatus } from "./schemas.js";
import { CheckpointRecord, ModelCallRecord, runTimeline, ToolCallRecord } from "./timeline.js";

// What `list()` and `get()` read: a small summary per run, kept apart from the heavy record (no
// snapshot, no messages), and a run's audit trail of decisions.

/** A stored run as `runtime.list()` shows it: no snapshot, no messages. */
export const RunSummary = lazySchema(() =>
  z.object({
    runId: z.string().min(1),
    agent: z.string().min(1),
    sessionId: z.string().min(1),
    status: RunRecordStatus,
    /** The machine phase the run is in (its state value). */
    phase: z.string(),
    /** The calls waiting for a person (non-empty exactly when awaiting approval). */
    pending: z.array(PendingApproval),
    /** Provider calls started so far. */
    iterations: z.number().int().nonnegative(),
    usage: Usage,
    error: RunError.nullable(),
    createdAt: z.number(),
    updatedAt: z.number(),
    /** A child run's (SPEC §14): the run whose call started it, that call, and the tree's root. */
    parentRunId: z.string().min(1).optional(),
    parentToolCallId: z.string().min(1).optional(),
    rootRunId: z.string().min(1).optional(),
  }),
);
export type RunSummary = z.infer<typeof RunSummary>;

/**
 * One decision on a tool call, as the run's audit trail keeps it for as long as the record:
 * a person's (`runtime.approve`/`deny`, `by` as given) or the runtime's own.
 */
export const DecisionRecord = lazySchema(() =>
  z.object({
    toolCallId: z.string().min(1),
    /** The tool's name. */
    name: z.string().min(1),
    decision: z.enum(["allow", "deny", "respond"]),
    reason: z.string().nullable(),
    by: z.string().nullable(),
    /** The hash of the call's input the decision was made on. */
    inputHash: z.string().nullable(),
    /** An edit and approve: the hash of the edited input, and the edited input (secrets redacted). */
    editedInputHash: z.string().optional(),
    editedInput: z.record(z.string(), z.unknown()).optional(),
    /** A respond: the person's answer, the call's result. */
    response: z.object({ content: z.string(), isError: z.boolean() }).optional(),
    /** A quorum call: how many must approve (this entry is one of them). */
    approvalsNeeded: z.number().int().optional(),
    /** When it was decided (ms since the epoch). */
    at: z.number(),
  }),
);
export type DecisionRecord = z.infer<typeof DecisionRecord>;

/**
 * A stored run as `runtime.get()` shows it: its summary, conversation and audit trail, and its
 * timeline (every save, every provider call with its tokens, every tool call with its raw and
 * processed result). A backend that keeps no timeline leaves the timeline fields out.
 */
export const RunDetail = lazySchema(() =>
  RunSummary.extend({
    messages: z.array(Message),
    /** Every recorded decision, oldest first. */
    decisions: z.array(DecisionRecord),
    /** Every save at an effect boundary, oldest first. */
    checkpoints: z.array(CheckpointRecord).optional(),
    /** Every provider call with its model, tokens, cache reads and writes, oldest first. */
    modelCalls: z.array(ModelCallRecord).optional(),
    /** Every tool call the model asked for, its raw result (before middleware) and processed one. */
    toolCalls: z.array(ToolCallRecord).optional(),
    /**
     * The input fields the run's tools mark secret, by tool name: `messages` and `toolCalls` hold
     * them as the model sent them; pass the detail through `redactToolInputs(detail,
     * detail.secretInputs)` before showing it. Absent when no tool marks any.
     */
    secretInputs: z.record(z.string(), z.array(z.array(z.string()))).optional(),
    /** Who asked to cancel the run (`runtime.cancel(runId, { by })`), when someone named did. */
    cancelledBy: z.string().optional(),
    /** The child runs its calls started (`agent.asTool`), oldest first. */
    children: z
      .array(z.object({ runId: z.string(), agent: z.string(), parentToolCallId: z.string() }))
      .optional(),
  }),
);
export type RunDetail = z.infer<typeof RunDetail>;

/** What a summary reads of a running run's machine context (the rest stays unparsed). */
const ContextProgress = lazySchema(() =>
  z.looseObject({
    iteration: z.number().int().nonnegative(),
    usage: Usage,
  }),
);

/**
 * `ContextProgress.safeParse`, without zod's copy of the context when it is plainly one (only
 * read: its keys may be in any order).
 */
const progressOf = (value: unknown) => ContextProgress.safeParse(value);

/** `progressOf`, without a parse for a context this process's run machine made. */
function progressOfContext(context: unknown) {
  const live = liveContext(context);
  return live === undefined ? progressOf(context) : { success: true as const, data: live };
}

/** The summary of a record: from its result once it has one, else from its snapshot. */
export function summarize(record: RunRecord): RunSummary {
  // A run not started (no snapshot yet: every new run) has no progress to read.
  const progress =
    record.result === null && record.snapshot !== null
      ? progressOfContext(record.snapshot.context)
      : undefined;
  return {
    runId: record.runId,
    agent: record.agent,
    sessionId: record.sessionId,
    status: record.status,
    phase: record.phase,
    // A summary never holds a secret input: lists, the inbox and status streams show it as is.
    pending: redactToolInputs(record.result?.pending ?? [], record.secretInputs),
    iterations: record.result?.iterations ?? (progress?.success ? progress.data.iteration : 0),
    usage: record.result?.usage ?? (progress?.success ? progress.data.usage : emptyUsage()),
    error: record.result?.error ?? null,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...treeLinkOf(record),
  };
}

/** A child run's link fields as its record holds them (none on a root). */
function treeLinkOf(
  record: RunRecord,
): Pick<RunSummary, "parentRunId" | "parentToolCallId" | "rootRunId"> {
  const { parentRunId, parentToolCallId, rootRunId } = record;
  if (parentRunId === undefined || parentToolCallId === undefined || rootRunId === undefined) {
    return {};
  }
  return { parentRunId, parentToolCallId, rootRunId };
}

/** The detail of a run: its summary, conversation, audit trail and, given its checkpoints, timeline. */
export function runDetail(
  record: RunRecord,
  decisions: readonly DecisionRecord[],
  checkpoints?: readonly StoredCheckpoint[],
  cancelledBy?: string,
): RunDetail {
  return {
    ...summarize(record),
    messages: [...conversationOf(record)],
    decisions: [...decisions],
    ...(checkpoints === undefined ? {} : runTimeline(record, checkpoints)),
    ...(record.secretInputs === undefined ? {} : { secretInputs: record.secretInputs }),
    ...(cancelledBy === undefined ? {} : { cancelledBy }),
  };
}

/**
 * How `list()` shows a run whose stored summary is corrupt (see `record-codec.ts`): its id, its
 * status as the index keeps it (`failed` when that is unreadable too), where it sits in the
 * index, and `error.code: "record_corrupt"`; `get()` of it rejects with that error.
 */
export function corruptSummary(
  runId: string,
  status: string,
  createdAt: number,
  error: unknown,
): RunSummary {
  const known = RunRecordStatus.safeParse(status);
  const at = Number.isFinite(createdAt) ? createdAt : 0;
  return {
    runId,
    agent: "?",
    sessionId: "?",
    status: known.success ? known.data : "failed",
    phase: "?",
    pending: [],
    iterations: 0,
    usage: emptyUsage(),
    error: {
      name: "BackendError",
      code: "record_corrupt",
      message: error instanceof Error ? error.message : `The stored run "${runId}" is corrupt.`,
    },
    createdAt: at,
    updatedAt: at,
  };
}
