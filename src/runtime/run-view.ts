import { BackendError } from "./errors.js";
import { type RunRecord, SnapshotContextView } from "./schemas.js";

/** What runtime code reads of a stored run's machine context: its iteration and calls. */
export function contextView(record: RunRecord): SnapshotContextView | undefined {
  if (record.snapshot === null) return undefined;
  const parsed = SnapshotContextView.safeParse(record.snapshot.context);
  if (!parsed.success) {
    throw new BackendError(`The stored snapshot of run "${record.runId}" does not parse.`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}
