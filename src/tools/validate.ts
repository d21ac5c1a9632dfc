import type { z } from "zod";

export type Validation<T> = { ok: true; value: T } | { ok: false; message: string };

/** One line per problem, each naming its input path: `query: Invalid input: expected string`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.length === 0 ? "(input)" : issue.path.map(String).join(".");
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}

/** Parses a tool's input; the failure message names each failing path. */
export function validateInput<T>(schema: z.ZodType<T>, input: unknown): Validation<T> {
  const parsed = schema.safeParse(input);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, message: describeIssues(parsed.error.issues) };
}
