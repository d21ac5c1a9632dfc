import type { CallState, RunContext, RunMachineEvent } from "../machines/run-machine.js";
import { approvalHash } from "../permissions/input-hash.js";
import { errorResult } from "../tools/run-handler.js";
import { decisionEntries, record } from "./record.js";
import type { RunEnv } from "./run-env.js";

/** Phase `permission`: the policy's verdict on every valid call. */
export async function resolvePermissions(
  context: RunContext,
  env: RunEnv,
): Promise<RunMachineEvent> {
  const calls = await Promise.all(
    context.calls.map(async (state): Promise<CallState> => {
      if (state.status !== "allowed") return state;
      const verdict = await env.permissions.resolve(state.call);
      switch (verdict.decision) {
        case "allow":
          return { ...state, reason: verdict.reason };
        case "deny":
          return denied(state, verdict.reason, "Permission denied");
        case "ask":
          return asked(context.runId, state, verdict.reason, env.approvalKey, verdict.approvals);
      }
    }),
  );
  if (env.recorder !== undefined) await record(env, context, ...decisionEntries(calls, "policy"));
  return { type: "PERMISSIONS_RESOLVED", calls };
}

/**
 * Phase `permissionRecheck`, immediately before dispatch: the policy in force now is asked
 * again. A deny wins even over a person's approval; an ask on a call nobody approved parks it.
 */
export async function recheckPermissions(
  context: Pick<RunContext, "runId" | "iteration" | "calls">,
  env: RunEnv,
  options: { personDecisionsRecorded?: boolean } = {},
): Promise<RunMachineEvent> {
  const calls = await Promise.all(
    context.calls.map(async (state): Promise<CallState> => {
      if (state.status === "rejected" && state.result === undefined) {
        return denied(state, state.reason, "Denied by reviewer");
      }
      if (state.status !== "allowed" && state.status !== "approved") return state;
      const verdict = await env.permissions.resolve(state.call);
      if (verdict.decision === "deny")
        return denied(state, verdict.reason, "Permission denied at dispatch");
      if (verdict.decision === "ask" && state.status === "allowed") {
        return asked(context.runId, state, verdict.reason, env.approvalKey, verdict.approvals);
      }
      return state;
    }),
  );
  if (env.recorder !== undefined) {
    const decided = context.calls.filter(
      (state) => state.status === "approved" || state.status === "rejected",
    );
    // A durable run asks again at the tool job, after its step recorded the person's word.
    if (options.personDecisionsRecorded !== true) {
      await record(env, context, ...decisionEntries(decided, "person"));
    }
    await record(env, context, ...decisionEntries(calls, "recheck", context.calls));
  }
  return { type: "RECHECKED", calls };
}

function denied(state: CallState, reason: string, prefix: string): CallState {
  return {
    ...state,
    status: state.status === "rejected" ? "rejected" : "denied",
    reason,
    result: errorResult(state.call.id, `${prefix}: ${reason}`),
  };
}

function asked(
  runId: string,
  state: CallState,
  reason: string,
  key: string | undefined,
  needed = 1,
): CallState {
  return {
    ...state,
    status: "asked",
    reason,
    inputHash: approvalHash(runId, state.call, key),
    ...(needed > 1 ? { approvals: { needed, given: [] } } : {}),
  };
}
