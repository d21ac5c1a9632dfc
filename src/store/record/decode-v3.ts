import { BackendError } from "../errors.js";
import type { RunSummary } from "../summary.js";
import { SUMMARY_FIELDS } from "./document.js";

// Version 3: the document may leave to the run's summary what the summary holds
// (`fromSummary: true`), its context's run and session ids to the record's (`sharedIds: true`),
// and a parked or finished run's result to its snapshot (no `result` key). This fills in what
// the summary holds; the ids and the result are filled in as the record is joined (decode.ts).

/** A document that says `fromSummary`, completed from the run's summary. */
export function fromSummary(stored: Record<string, unknown>, summary: RunSummary | undefined) {
  if (summary === undefined) {
    throw new BackendError("A stored run record refers to a summary that is not stored with it.");
  }
  const snapshot = stored.snapshot as
    | { value?: unknown; context?: Record<string, unknown> }
    | null
    | undefined;
  const context = snapshot?.context;
  return {
    ...Object.fromEntries(SUMMARY_FIELDS.map((field) => [field, summary[field]])),
    ...stored,
    snapshot:
      snapshot == null
        ? snapshot
        : {
            value: summary.phase,
            ...snapshot,
            context: { usage: summary.usage, iteration: summary.iterations, ...context },
          },
  };
}
