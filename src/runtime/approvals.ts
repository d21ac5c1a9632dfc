import { z } from "zod";
import { ApprovalError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { Message, type ToolCall } from "../core/values.js";
import {
  checkEdit,
  checkQuorumDecider,
  checkResponse,
  type EditCheckEnv,
} from "../engine/person-decisions.js";
import { approvalHash } from "../permissions/input-hash.js";
import type { RunBackend } from "../store/backend.js";
import { callKey, contextView, currentAgentOf } from "../store/run-view.js";
import { isTerminal, type RunRecord, type StoredDecision } from "../store/schemas.js";
import type { DecisionRecord } from "../store/summary.js";
import type { ToolLimits } from "../tools/result-limit.js";
import { redactInput } from "../tools/secret-inputs.js";

export interface DecisionOptions {
  /** Who decided, recorded on the call. A quorum call needs it: approvals count once per `by`. */
  by?: string;
  reason?: string;
  /**
   * `approve` only: the person's edit of the call's input, which the handler then receives.
   * Checked against the tool's schema (`input_invalid`) and the policy (`approval_refused`)
   * before anything is recorded; needs the run's agent in this process.
   */
  input?: Record<string, unknown>;
}

/** `runtime.respond`: the person's answer becomes the call's result; the handler never runs. */
export interface RespondOptions {
  by?: string;
  reason?: string;
  content: string;
  /** Whether the model is told the call failed. @defaultValue false */
  isError?: boolean;
}

/** A decision as asked for: allow (maybe edited), deny, or respond. */
export type RequestedDecision =
  | { decision: "allow"; input?: Record<string, unknown> | undefined }
  | { decision: "deny" }
  | { decision: "respond"; content: string; isError?: boolean | undefined };

/** What recording a decision needs of the run's agent, when this process has it. */
export interface DecidingAgent {
  /** The approval key that binds a decision to its call and input. */
  key: string | undefined;
  /** The run's tools and policy, for an edit's checks. */
  env: EditCheckEnv;
}

/** What `recordDecision` did: the run as read, and whether the call is now decided. */
export interface RecordedDecision {
  record: RunRecord;
  /** False when a quorum approval was counted and the call still waits for others. */
  decided: boolean;
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
    decision: RequestedDecision;
    options: Pick<DecisionOptions, "by" | "reason">;
    id: string;
    now: number;
    /**
     * The run's agent, when this process has it; without the agent the stored input is not
     * checked here (the worker that applies the decision checks it) and no edit is accepted.
     */
    agent: (name: string) => DecidingAgent | undefined;
    limits?: ToolLimits | undefined;
  },
): Promise<RecordedDecision> {
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
  const { decision, options } = request;
  const call = state.call as ToolCall;
  checkQuorumDecider(state, options, runId);
  const edit =
    decision.decision === "allow" && decision.input !== undefined
      ? await checkEdit(
          editingAgent(request.agent, record.agent, toolCallId),
          runId,
          call,
          decision.input,
        )
      : undefined;
  const response =
    decision.decision === "respond"
      ? {
          content: checkResponse(toolCallId, decision.content, request.limits),
          isError: decision.isError ?? false,
        }
      : undefined;
  const stored: StoredDecision = {
    id: request.id,
    decision: decision.decision,
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(state.inputHash === undefined ? {} : { inputHash: state.inputHash }),
    ...(edit === undefined ? {} : { input: edit.input }),
    ...(response === undefined ? {} : response),
    decidedAt: request.now,
  };
  const needed = state.approvals?.needed;
  const audit: DecisionRecord = {
    toolCallId,
    name: state.call.name,
    decision: decision.decision,
    reason: options.reason ?? null,
    by: options.by ?? null,
    inputHash: state.inputHash ?? null,
    at: request.now,
    ...(edit === undefined
      ? {}
      : {
          editedInputHash: edit.inputHash,
          editedInput: redactInput(edit.input, record.secretInputs?.[call.name]),
        }),
    ...(response === undefined ? {} : { response }),
    ...(needed === undefined ? {} : { approvalsNeeded: needed }),
  };
  const check = (now: RunRecord | undefined) => checkUntampered(now, toolCallId, request.agent);
  if (needed === undefined) {
    const won = await backend.decide(
      runId,
      context.iteration,
      callKey(state),
      stored,
      audit,
      check,
    );
    if (!won) throw alreadyDecided();
    return { record, decided: true };
  }
  const outcome = await backend.decideInQuorum(
    runId,
    context.iteration,
    callKey(state),
    stored,
    audit,
    {
      by: options.by ?? "",
      needed,
      ...(decision.decision === "allow"
        ? { inputHash: edit?.inputHash ?? state.inputHash ?? "" }
        : {}),
    },
    check,
  );
  if (outcome === "already_decided") throw alreadyDecided();
  if (outcome === "repeated") {
    throw new ApprovalError(
      "approver_repeated",
      `"${options.by}" has already decided tool call "${toolCallId}" of run "${runId}"; it needs ${needed} distinct people.`,
    );
  }
  return { record, decided: outcome === "decided" };
}

/** The run's agent for an edit: an edit is checked with its tools and policy, here. */
function editingAgent(
  agent: (name: string) => DecidingAgent | undefined,
  name: string,
  toolCallId: string,
): EditCheckEnv {
  const found = agent(name);
  if (found === undefined) {
    throw new ApprovalError(
      "approval_invalid",
      `Editing the input of tool call "${toolCallId}" needs agent "${name}" in this process (its tool's schema and policy check the edit): register it with the runtime (the CLI: --agents MODULE).`,
    );
  }
  return found.env;
}

function requestedEarlier(record: RunRecord, toolCallId: string): boolean {
  const parsed = Messages.safeParse(record.result?.messages ?? record.messages);
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
  const agent = approvalKey(currentAgentOf(record));
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
