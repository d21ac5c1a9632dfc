import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import type { RunEvent } from "../engine/run-events.js";
import { describeIssues } from "../tools/validate.js";

/** A run event with its place in the run's event log (0 is the first event ever published). */
export interface NumberedEvent {
  position: number;
  event: RunEvent;
}

/**
 * The events of a run's log that are stored now, from a position on: `next` is the position to
 * read from next time (past the last event given, or where the log stands when none is new).
 */
export interface EventPage {
  events: RunEvent[];
  next: number;
}

/** Events per `runtime.events()` page. */
export const DEFAULT_EVENT_PAGE = 200;
export const MAX_EVENT_PAGE = 1000;

/** What `runtime.events()` accepts. */
export interface EventReadOptions {
  /** The position to read from (a page's `next`). @defaultValue 0 */
  after?: number | undefined;
  /** Events per page, at most 1000. @defaultValue 200 */
  limit?: number | undefined;
}

const EventReadOptionsSchema = lazySchema(() =>
  z.strictObject({
    after: z.number().int().nonnegative().optional(),
    limit: z.number().int().min(1).max(MAX_EVENT_PAGE).optional(),
  }),
);

/** The options with their defaults; a bad one is refused with `ConfigError`. */
export function parseEventReadOptions(options: EventReadOptions): {
  after: number;
  limit: number;
} {
  const parsed = EventReadOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid event read options: ${describeIssues(parsed.error.issues)}`);
  }
  return { after: parsed.data.after ?? 0, limit: parsed.data.limit ?? DEFAULT_EVENT_PAGE };
}
