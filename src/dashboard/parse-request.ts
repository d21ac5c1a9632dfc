import type { z } from "zod";
import { describeIssues } from "../tools/validate.js";
import { HttpError } from "./http-errors.js";

/** `value` parsed by `schema`, or a 400 `<what>_invalid` naming each issue's path. */
export function parseOrRefuse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) {
    throw new HttpError(
      400,
      `${what}_invalid`,
      `Invalid ${what}: ${describeIssues(parsed.error.issues)}`,
    );
  }
  return parsed.data;
}
