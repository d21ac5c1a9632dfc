import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import { Message, PendingApproval } from "../core/values.js";
import { describeIssues, type Validation } from "../tools/validate.js";

/**
 * A run waiting for approval, as plain JSON: the machine snapshot, the conversation and what
 * waits. Store it anywhere; an agent built the same way resumes it in any process. Version 1
 * kept the conversation inside the snapshot's context; it is still read (`parseParked`).
 */
export const ParkedRun = lazySchema(() =>
  z.object({
    schemaVersion: z.literal(2),
    agent: z.string(),
    runId: z.string().min(1),
    sessionId: z.string().min(1),
    parkedAt: z.number(),
    pending: z.array(PendingApproval.extend({ inputHash: z.string().length(64) })),
    /** The run's conversation so far (the snapshot's context holds its `messageCount`). */
    messages: z.array(Message),
    /** The persisted XState snapshot of the run machine. */
    snapshot: z.looseObject({
      status: z.literal("active"),
      value: z.literal("awaitingApproval"),
      context: z.unknown(),
    }),
  }),
);
export type ParkedRun = z.infer<typeof ParkedRun>;

// A function, not a constant: its schemas are built with ApprovalDecision, not at import.
const decidedBy = () => ({ reason: z.string().optional(), by: z.string().optional() });

/**
 * A person's decision on one pending call (SPEC §7.1): allow (with `input`: the person's edit),
 * deny, or respond (`content` becomes the call's result; the handler never runs).
 */
export const ApprovalDecision = lazySchema(() =>
  z.union([
    z.enum(["allow", "deny"]),
    z.object({
      decision: z.literal("allow"),
      input: z.record(z.string(), z.unknown()).optional(),
      ...decidedBy(),
    }),
    z.object({ decision: z.literal("deny"), ...decidedBy() }),
    z.object({
      decision: z.literal("respond"),
      content: z.string(),
      isError: z.boolean().optional(),
      ...decidedBy(),
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
