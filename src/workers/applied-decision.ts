import type { Decision } from "../machines/run-machine.js";
import type { StoredDecision } from "../store/schemas.js";

/**
 * A recorded decision as the run's machine applies it. An allow recorded in the call ledger is
 * final: a quorum call's allow is recorded only once its approvals were counted there.
 */
export function appliedDecision(stored: StoredDecision): Decision {
  return {
    decision: stored.decision,
    ...(stored.reason === undefined ? {} : { reason: stored.reason }),
    ...(stored.by === undefined ? {} : { by: stored.by }),
    ...(stored.input === undefined ? {} : { input: stored.input }),
    ...(stored.content === undefined ? {} : { content: stored.content }),
    ...(stored.isError === undefined ? {} : { isError: stored.isError }),
    at: stored.decidedAt,
    ...(stored.decision === "allow" ? { quorumMet: true } : {}),
  };
}
