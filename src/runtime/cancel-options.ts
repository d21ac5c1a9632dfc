import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { describeIssues } from "../tools/validate.js";

/** `runtime.cancel(runId, options)`. */
export interface CancelOptions {
  /** Who cancels (a person, a token's name, a service): kept as `RunDetail.cancelledBy`. */
  by?: string;
}

// As long as a name can usefully be: the dashboard shows it, the record keeps it.
const MAX_BY_LENGTH = 200;

const CancelOptionsSchema = lazySchema(() =>
  z.strictObject({
    by: z.string().trim().min(1).max(MAX_BY_LENGTH).optional(),
  }),
);

/** Who cancels, checked: a bad option is refused with `ConfigError`, before anything is asked. */
export function parseCancelOptions(options: CancelOptions): string | undefined {
  const parsed = CancelOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid cancel options: ${describeIssues(parsed.error.issues)}`);
  }
  return parsed.data.by;
}
