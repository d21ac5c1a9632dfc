import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import { redactInput } from "../tools/secret-inputs.js";
import { callKey, contextView } from "./run-view.js";
import type { RunRecord } from "./schemas.js";

/**
 * A call that started waiting for a person (SPEC §7.1 "Notifications"): what
 * `onApprovalRequested` receives and the approval webhook POSTs. Its input has its secret
 * fields redacted, as everywhere.
 */
export const ApprovalRequest = lazySchema(() =>
  z.strictObject({
    runId: z.string().min(1),
    toolCallId: z.string().min(1),
    agent: z.string().min(1),
    /** The tool's name. */
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    /** Why the call waits (the policy's reason). */
    reason: z.string(),
    /** When the run parked (ms since the epoch). */
    since: z.number(),
    /** The run at the root of the run's tree (§14); a run's own id while it has no parent. */
    rootRunId: z.string().min(1),
  }),
);
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

/** A notice job: the request, and which round of the call it is (a re-ask is notified anew). */
export const ApprovalNoticeJob = lazySchema(() =>
  z.strictObject({
    request: ApprovalRequest,
    /** The call's key in its iteration (`callKey`): a job id part, so one notice per round. */
    round: z.string().min(1),
  }),
);
export type ApprovalNoticeJob = z.infer<typeof ApprovalNoticeJob>;

/** The one place a run's root is read: a child's record names it (§14); a root is its own. */
export const rootRunIdOf = (record: Pick<RunRecord, "runId" | "rootRunId">): string =>
  record.rootRunId ?? record.runId;

/** The rounds of calls waiting for a person in `record`: iteration and call key. */
function waitingRounds(record: RunRecord | undefined): Map<string, string> {
  const rounds = new Map<string, string>();
  if (record === undefined || record.status !== "awaiting_approval") return rounds;
  const context = contextView(record);
  for (const state of context?.calls ?? []) {
    if (state.status === "asked") {
      rounds.set(`${context?.iteration ?? 0}:${callKey(state)}`, state.call.id);
    }
  }
  return rounds;
}

/**
 * The calls that started waiting between `before` and `after` (the run as a step found it and
 * as it left it): once per call and round, however often the parked run is saved again (a
 * quorum's first approval leaves its call waiting: not a new request).
 */
export function newApprovalRequests(
  before: RunRecord | undefined,
  after: RunRecord,
): ApprovalNoticeJob[] {
  const waiting = waitingRounds(after);
  if (waiting.size === 0) return [];
  const already = waitingRounds(before);
  const pending = after.result?.pending ?? [];
  const jobs: ApprovalNoticeJob[] = [];
  for (const [round, toolCallId] of waiting) {
    if (already.has(round)) continue;
    const call = pending.find((each) => each.toolCallId === toolCallId);
    if (call === undefined) continue;
    jobs.push({
      round,
      request: {
        runId: after.runId,
        toolCallId,
        agent: after.agent,
        name: call.name,
        input: redactInput(call.input, after.secretInputs?.[call.name]),
        reason: call.reason,
        since: after.updatedAt,
        rootRunId: rootRunIdOf(after),
      },
    });
  }
  return jobs;
}
