import { z } from "zod";
import { ApprovalError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { Message, type ToolCall } from "../core/values.js";
import { approvalHash } from "../permissions/input-hash.js";
import type { RunBackend } from "../store/backend.js";
import { callKey, contextView } from "../store/run-view.js";
import { isTerminal, type RunRecord, type StoredDecision } from "../store/schemas.js";
import type { DecisionRecord } from "../store/summary.js";

export interface DecisionOptions {
  /** Who decided, recorded on the call. */
  by?: string;
  reason?: string;
}

/**
 * Records a person's decision on one pending call of a parked run; exactly one of two racing
 * decisions wins (the backend's first-write-wins), the other is refused with `already_decided`.
 * The winning decision joins the run's audit trail (`RunDetail.decisions`), which is kept for as
 * long as the run's record. Throws `ApprovalError` (`run_not_found`, `tool_call_not_found`,
 * `already_decided`, `approval_tampered`) and changes nothing when the decision cannot apply:
 * the stored call must still hash to the input the person was asked about, checked in the same
 * atomic step that records the decision. Returns the run's record as it was read.
 */
export async function recordDecision(
  backend: RunBackend,
  request: {
    runId: string;
    toolCallId: string;
    decision: "allow" | "deny";
    options: DecisionOptions;
    id: string;
    now: number;
    /**
     * The run's agent's approval key, when this process has the agent; without the agent the
     * stored input is not checked here (the worker that applies the decision checks it).
     */
    approvalKey: (agent: string) => { key: string | undefined } | undefined;
  },
): Promise<RunRecord> {
  const { runId, toolCallId } = request;
  const record = await backend.loadRun(runId);
  if (record === undefined) {
    throw new ApprovalError("run_not_found", `No run "${runId}" exists.`);
  }
  const context = contextView(record);
  const state = context?.calls.find((each) => each.call.id === toolCallId);
  const alreadyDecided = () =>
    new ApprovalError(
      "already_decided",
      `Tool call "${toolCallId}" of run "${runId}" is not pending: it is already decided.`,
    );
  if (context === undefined || state === undefined) {
    // A call of an earlier iteration is settled; one the run never made is unknown.
    if (requestedEarlier(record, toolCallId)) throw alreadyDecided();
    throw new ApprovalError(
      "tool_call_not_found",
      `Run "${runId}" has no tool call "${toolCallId}".`,
    );
  }
  if (state.status !== "asked" || isTerminal(record.status)) throw alreadyDecided();
  const stored: StoredDecision = {
    id: request.id,
    decision: request.decision,
    ...(request.options.reason === undefined ? {} : { reason: request.options.reason }),
    ...(request.options.by === undefined ? {} : { by: request.options.by }),
    ...(state.inputHash === undefined ? {} : { inputHash: state.inputHash }),
    decidedAt: request.now,
  };
  const audit: DecisionRecord = {
    toolCallId,
    name: state.call.name,
    decision: request.decision,
    reason: request.options.reason ?? null,
    by: request.options.by ?? null,
    inputHash: state.inputHash ?? null,
    at: request.now,
  };
  const won = await backend.decide(runId, context.iteration, callKey(state), stored, audit, (now) =>
    checkUntampered(now, toolCallId, request.approvalKey),
  );
  if (!won) throw alreadyDecided();
  return record;
}

function requestedEarlier(record: RunRecord, toolCallId: string): boolean {
  const parsed = Messages.safeParse(record.result?.messages ?? record.snapshot?.context.messages);
  return (
    parsed.success &&
    parsed.data.some((message) =>
      message.content.some((block) => block.type === "tool_use" && block.id === toolCallId),
    )
  );
}

const Messages = lazySchema(() => z.array(Message));

/**
 * Refuses a decision on a call whose stored input no longer hashes to what was asked (the
 * stored run was edited): applying it could run an input nobody approved.
 */
function checkUntampered(
  record: RunRecord | undefined,
  toolCallId: string,
  approvalKey: (agent: string) => { key: string | undefined } | undefined,
): void {
  if (record === undefined) return;
  const agent = approvalKey(record.agent);
  if (agent === undefined) return;
  const state = contextView(record)?.calls.find((each) => each.call.id === toolCallId);
  if (state === undefined || state.status !== "asked") return;
  const call = state.call as ToolCall;
  if (state.inputHash === approvalHash(record.runId, call, agent.key)) return;
  throw new ApprovalError(
    "approval_tampered",
    `Tool call "${toolCallId}" of run "${record.runId}" no longer matches the input that was asked about (the stored run was changed): the decision is refused.`,
  );
}
