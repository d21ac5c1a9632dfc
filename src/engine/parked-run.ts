import { z } from "zod";
import { PendingApproval } from "../core/values.js";

/**
 * A run waiting for approval, as plain JSON: the machine snapshot and what waits. Store it
 * anywhere; an agent built the same way resumes it in any process.
 */
export const ParkedRun = z.object({
  schemaVersion: z.literal(1),
  agent: z.string(),
  runId: z.string().min(1),
  sessionId: z.string().min(1),
  parkedAt: z.number(),
  pending: z.array(PendingApproval.extend({ inputHash: z.string().length(64) })),
  /** The persisted XState snapshot of the run machine. */
  snapshot: z.looseObject({
    status: z.literal("active"),
    value: z.literal("awaitingApproval"),
    context: z.unknown(),
  }),
});
export type ParkedRun = z.infer<typeof ParkedRun>;

/** A person's decision on one pending call. */
export const ApprovalDecision = z.union([
  z.enum(["allow", "deny"]),
  z.object({
    decision: z.enum(["allow", "deny"]),
    reason: z.string().optional(),
    by: z.string().optional(),
  }),
]);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const ResumeDecisions = z.record(z.string(), ApprovalDecision);
