import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import { PendingApproval } from "../core/values.js";
import { describeIssues, type Validation } from "../tools/validate.js";

/**
 * A run waiting for approval, as plain JSON: the machine snapshot and what waits. Store it
 * anywhere; an agent built the same way resumes it in any process.
 */
export const ParkedRun = lazySchema(() =>
  z.object({
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
  }),
);
export type ParkedRun = z.infer<typeof ParkedRun>;

/** A person's decision on one pending call. */
export const ApprovalDecision = lazySchema(() =>
  z.union([
    z.enum(["allow", "deny"]),
    z.object({
      decision: z.enum(["allow", "deny"]),
      reason: z.string().optional(),
      by: z.string().optional(),
    }),
  ]),
);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/**
 * Resume decisions by tool-call id, parsed entry by entry: ids are model data, and zod's
 * `z.record` silently drops a "__proto__" key.
 */
export function parseResumeDecisions(
  raw: unknown,
): Validation<Array<readonly [string, ApprovalDecision]>> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, message: "(decisions): expected an object of decisions by tool call id" };
  }
  const entries: Array<readonly [string, ApprovalDecision]> = [];
  const issues: z.core.$ZodIssue[] = [];
  for (const [toolCallId, value] of Object.entries(raw)) {
    const parsed = ApprovalDecision.safeParse(value);
    if (parsed.success) entries.push([toolCallId, parsed.data]);
    else
      issues.push(
        ...parsed.error.issues.map((issue) => ({ ...issue, path: [toolCallId, ...issue.path] })),
      );
  }
  return issues.length === 0
    ? { ok: true, value: entries }
    : { ok: false, message: describeIssues(issues) };
}
