import type { PendingApproval } from "../core/values.js";
import type { CallLedger } from "../store/call-ledger.js";

/** What a list or detail shows of a parked run: its id, iteration and waiting calls. */
interface Parked {
  runId: string;
  iterations: number;
  pending: PendingApproval[];
}

/**
 * `run` with the approvals its quorum calls have been given so far: a durable run counts them
 * in its call ledger (the record says only how many are needed). One read per such run.
 */
export async function withGivenApprovals<T extends Parked>(ledger: CallLedger, run: T): Promise<T> {
  if (!run.pending.some((call) => call.approvals !== undefined)) return run;
  const given = await ledger.quorumApprovals(run.runId, run.iterations);
  return {
    ...run,
    pending: run.pending.map((call) =>
      call.approvals === undefined
        ? call
        : {
            ...call,
            approvals: { needed: call.approvals.needed, given: given[call.toolCallId] ?? [] },
          },
    ),
  };
}
