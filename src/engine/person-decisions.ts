import { ApprovalError } from "../core/errors.js";
import { recordById } from "../core/id-record.js";
import type { ToolCall } from "../core/values.js";
import type { Decision, RunContext } from "../machines/run-context.js";
import { approvalHash } from "../permissions/input-hash.js";
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from "../tools/result-limit.js";
import { validateInput } from "../tools/validate.js";
import type { RunEnv } from "./run-env.js";

// The checks a person's edit or answer passes before it is recorded (SPEC §7.1), shared by
// direct runs (`agent.resume`) and durable ones (`runtime.approve` / `respond`).

/** What an edit is checked with: the run's tools, its policy and its approval key. */
export type EditCheckEnv = Pick<RunEnv, "tools" | "permissions" | "approvalKey">;

/** An edit that passed its checks: the input the handler will get, and its approval hash. */
export interface CheckedEdit {
  input: Record<string, unknown>;
  inputHash: string;
}

/**
 * Checks a person's edit of `call`'s input: a JSON object the tool's schema accepts, with no key
 * the schema does not know (`input_invalid`), that the policy in force does not deny
 * (`approval_refused`; an `ask` is satisfied by the person's decision).
 */
export async function checkEdit(
  env: EditCheckEnv,
  runId: string,
  call: ToolCall,
  edited: unknown,
): Promise<CheckedEdit> {
  const invalid = (why: string) =>
    new ApprovalError(
      "input_invalid",
      `The edited input of tool call "${call.id}" (${call.name}) is refused: ${why}. The call keeps waiting.`,
    );
  if (!isPlainObject(edited)) throw invalid("it is not a JSON object");
  const tool = env.tools.get(call.name);
  if (tool === undefined) throw invalid(`no tool "${call.name}" is registered here`);
  const parsed = validateInput(tool.input, edited);
  if (!parsed.ok) throw invalid(parsed.message);
  const extra = extraKeys(edited, parsed.value, "");
  if (extra.length > 0) throw invalid(`unknown key(s) ${extra.join(", ")}`);
  const editedCall: ToolCall = { ...call, input: edited };
  const verdict = await env.permissions.resolve(editedCall);
  if (verdict.decision === "deny") {
    throw new ApprovalError(
      "approval_refused",
      `The policy denies tool call "${call.id}" (${call.name}) with the edited input: ${verdict.reason}. Nothing was recorded.`,
    );
  }
  return { input: edited, inputHash: approvalHash(runId, editedCall, env.approvalKey) };
}

/**
 * Checks a person's answer in a tool's place: a string within `maxToolResultBytes`
 * (`input_too_large` otherwise: nothing is recorded, never a cut answer).
 */
export function checkResponse(
  toolCallId: string,
  content: unknown,
  limits: ToolLimits = DEFAULT_TOOL_LIMITS,
): string {
  if (typeof content !== "string") {
    throw new ApprovalError(
      "approval_invalid",
      `The response to tool call "${toolCallId}" needs \`content\`: a string.`,
    );
  }
  const bytes = Buffer.byteLength(content);
  if (bytes > limits.maxToolResultBytes) {
    throw new ApprovalError(
      "input_too_large",
      `The response to tool call "${toolCallId}" is ${bytes} bytes, over maxToolResultBytes (${limits.maxToolResultBytes}); nothing was recorded.`,
    );
  }
  return content;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Keys of `given` the schema's parse dropped (zod strips unknown keys), at any depth. */
function extraKeys(given: unknown, parsed: unknown, at: string): string[] {
  if (Array.isArray(given) && Array.isArray(parsed)) {
    return given.flatMap((item, index) => extraKeys(item, parsed[index], `${at}[${index}]`));
  }
  if (!isPlainObject(given) || typeof parsed !== "object" || parsed === null) return [];
  return Object.keys(given).flatMap((key) => {
    const path = at === "" ? key : `${at}.${key}`;
    return Object.hasOwn(parsed, key)
      ? extraKeys(given[key], (parsed as Record<string, unknown>)[key], path)
      : [`"${path}"`];
  });
}

/**
 * A direct run's resume decisions, checked against the run's waiting calls and completed: each
 * edit checked (`checkEdit`) and bound to its hash, each answer within its limit, each quorum
 * approval named and by someone who has not decided the call yet (`approver_repeated`). Throws
 * an `ApprovalError` before anything changes.
 */
export async function completeDecisions(
  env: EditCheckEnv & Pick<RunEnv, "limits">,
  context: Pick<RunContext, "runId" | "calls">,
  decisions: Record<string, Decision>,
  now: number,
): Promise<Record<string, Decision>> {
  const completed: Array<readonly [string, Decision]> = [];
  for (const [toolCallId, decision] of Object.entries(decisions)) {
    const state = context.calls.find((each) => each.call.id === toolCallId);
    if (state === undefined) continue;
    checkQuorumDecider(state, decision, context.runId);
    let done: Decision = { ...decision, at: now };
    if (decision.decision === "respond") {
      checkResponse(toolCallId, decision.content, env.limits);
    } else if (decision.decision === "allow" && decision.input !== undefined) {
      const edit = await checkEdit(env, context.runId, state.call, decision.input);
      done = { ...done, input: edit.input, inputHash: edit.inputHash };
    }
    completed.push([toolCallId, done]);
  }
  return recordById(completed);
}

/** A quorum call's decider must be named, and not have decided the call already. */
export function checkQuorumDecider(
  state: {
    call: { id: string };
    approvals?: { needed: number; given: ReadonlyArray<{ by: string }> } | undefined;
  },
  decision: Pick<Decision, "by">,
  runId: string,
): void {
  if (state.approvals === undefined) return;
  if (decision.by === undefined || decision.by === "") {
    throw new ApprovalError(
      "approval_invalid",
      `Tool call "${state.call.id}" of run "${runId}" needs ${state.approvals.needed} distinct approvers: a decision on it must say \`by\`.`,
    );
  }
  if (state.approvals.given.some((each) => each.by === decision.by)) {
    throw new ApprovalError(
      "approver_repeated",
      `"${decision.by}" has already approved tool call "${state.call.id}" of run "${runId}"; it needs ${state.approvals.needed} distinct people.`,
    );
  }
}
