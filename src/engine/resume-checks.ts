import { ApprovalError } from "../core/errors.js";
import { checkDecisions, parseParked } from "./park-run.js";
import type { ApprovalDecision, ParkedRun } from "./parked-run.js";

/** What an agent knows of the runs it may resume. */
export interface ResumingAgent {
  name: string;
  approvalKey: string | undefined;
  parked: ReadonlyMap<string, ParkedRun>;
  /** Runs being resumed now. */
  resuming: ReadonlySet<string>;
}

/**
 * The parked run a resume applies to, and its decisions checked; refuses a run being resumed
 * already, an unknown one, another agent's, and tampered data or decisions.
 */
export function checkResume(
  run: string | ParkedRun,
  decisions: Record<string, ApprovalDecision>,
  agent: ResumingAgent,
): { runId: string; parked: ParkedRun; checked: ReturnType<typeof checkDecisions> } {
  const given = typeof run === "string" ? undefined : parseParked(run);
  const runId = given?.runId ?? (run as string);
  if (agent.resuming.has(runId)) {
    throw new ApprovalError("already_decided", `Run "${runId}" is being resumed already.`);
  }
  // A copy is checked as given (tampering), then what this agent parked itself, if anything,
  // is authoritative: a stale copy cannot replay a decision already applied here.
  if (given !== undefined) checkDecisions(given, decisions, agent.approvalKey);
  const parked = agent.parked.get(runId) ?? given;
  if (parked === undefined) {
    throw new ApprovalError(
      "run_not_found",
      `Run "${runId}" is not awaiting approval on this agent.`,
    );
  }
  if (parked.agent !== agent.name) {
    throw new ApprovalError(
      "approval_invalid",
      `Run "${runId}" was parked by agent "${parked.agent}", not "${agent.name}".`,
    );
  }
  return { runId, parked, checked: checkDecisions(parked, decisions, agent.approvalKey) };
}
