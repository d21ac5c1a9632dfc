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

/**
 * The key of a call's current attempt, under which its in-flight marker and a person's
 * decision are stored: the call's id, then `#n` once n crash interruptions asked for it again
 * (provider call ids contain no `#`), so every approval round is decided anew.
 */
export function callKey(state: { call: { id: string }; interruptions?: number | undefined }) {
  const attempt = state.interruptions ?? 0;
  return attempt === 0 ? state.call.id : `${state.call.id}#${attempt}`;
}
