import { ApprovalError } from "../core/errors.js";
import { recordById } from "../core/id-record.js";
import type { Message } from "../core/values.js";
import type { RunCursor } from "../machines/run-cursor.js";
import type { Decision, RunContext } from "../machines/run-machine.js";
import { approvalHash } from "../permissions/input-hash.js";
import { describeIssues } from "../tools/validate.js";
import { type ApprovalDecision, ParkedRun, parseResumeDecisions } from "./parked-run.js";
import { decisionApplies } from "./run-lifecycle.js";
import { pendingOf } from "./run-result.js";

// A direct run that waits for a person: parked with its snapshot and what it asks, and the
// decisions of its resume checked against that before anything changes.

/** Who parks a run, when, and the key that binds each approval to its call and input. */
export interface ParkingAgent {
  name: string;
  now: number;
  approvalKey: string | undefined;
  /** The run's log; the parked run keeps its first `messageCount`. */
  conversation: readonly Message[];
}

/** A run standing at `awaitingApproval` (its `context` and `cursor`), parked. */
export function parkRun(context: RunContext, cursor: RunCursor, by: ParkingAgent): ParkedRun {
  return {
    schemaVersion: 2,
    agent: by.name,
    runId: context.runId,
    sessionId: context.sessionId,
    parkedAt: by.now,
    pending: context.calls
      .filter((each) => each.status === "asked")
      .map((each, index) => ({
        ...(pendingOf(context)[index] as NonNullable<ReturnType<typeof pendingOf>[number]>),
        inputHash: each.inputHash ?? approvalHash(context.runId, each.call, by.approvalKey),
      })),
    messages: structuredClone(by.conversation.slice(0, context.messageCount)),
    snapshot: JSON.parse(JSON.stringify(cursor.getPersistedSnapshot())) as ParkedRun["snapshot"],
  };
}

/** A parked run given back by a caller, parsed: `approval_invalid` unless it is one. */
export function parseParked(run: unknown): ParkedRun {
  const parsed = ParkedRun.safeParse(fromVersion1(run));
  if (!parsed.success) {
    throw new ApprovalError(
      "approval_invalid",
      `Not a parked run: ${describeIssues(parsed.error.issues)}`,
    );
  }
  return parsed.data;
}

/**
 * A parked run of version 1 as version 2: its conversation out of the snapshot's context,
 * which keeps its count. Anything else is returned as it is, for the parse to judge.
 */
function fromVersion1(run: unknown): unknown {
  if (!isObject(run) || run.schemaVersion !== 1 || !isObject(run.snapshot)) return run;
  const context = run.snapshot.context;
  if (!isObject(context) || !Array.isArray(context.messages)) return run;
  const { messages, ...position } = context;
  return {
    ...run,
    schemaVersion: 2,
    messages,
    snapshot: { ...run.snapshot, context: { ...position, messageCount: messages.length } },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The decisions of a resume, validated against what waits in `parked` (each bound to its call
 * and input by `key`); throws an `ApprovalError` before anything changes.
 */
export function checkDecisions(
  parked: ParkedRun,
  raw: Readonly<Record<string, ApprovalDecision>>,
  key: string | undefined,
): Record<string, Decision> {
  const parsed = parseResumeDecisions(raw);
  if (!parsed.ok || parsed.value.length === 0) {
    throw new ApprovalError(
      "approval_invalid",
      parsed.ok ? "Resume needs at least one decision." : `Invalid decisions: ${parsed.message}`,
    );
  }
  const context = parked.snapshot.context as RunContext;
  const decisions: Array<readonly [string, Decision]> = [];
  for (const [toolCallId, value] of parsed.value) {
    const pending = parked.pending.find((each) => each.toolCallId === toolCallId);
    if (pending === undefined) {
      const known = context.calls?.some((each) => each.call.id === toolCallId);
      throw known
        ? new ApprovalError(
            "already_decided",
            `Tool call "${toolCallId}" of run "${parked.runId}" is already decided.`,
          )
        : new ApprovalError(
            "tool_call_not_found",
            `Run "${parked.runId}" has no pending tool call "${toolCallId}".`,
          );
    }
    const state = context.calls?.find((each) => each.call.id === toolCallId);
    const bound =
      state !== undefined &&
      decisionApplies(parked.runId, state, pending.inputHash, key) &&
      approvalHash(
        parked.runId,
        { id: toolCallId, name: pending.name, input: pending.input },
        key,
      ) === pending.inputHash;
    if (!bound) {
      throw new ApprovalError(
        "approval_tampered",
        `The pending input of tool call "${toolCallId}" does not match what was asked; refusing to resume.`,
      );
    }
    decisions.push([
      toolCallId,
      typeof value === "string" ? { decision: value } : dropUndefined(value),
    ]);
  }
  return recordById(decisions);
}

/** The decision without its undefined fields (the machine's context is plain JSON). */
const dropUndefined = (value: Exclude<ApprovalDecision, string>): Decision =>
  Object.fromEntries(
    Object.entries(value).filter(([, field]) => field !== undefined),
  ) as unknown as Decision;
