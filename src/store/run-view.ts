import type { RunContext } from "../machines/run-machine.js";
import { BackendError } from "./errors.js";
import { liveContext } from "./live-context.js";
import { type RunRecord, SnapshotContextView } from "./schemas.js";

// Views already parsed, by the context object they were parsed from: a loaded record's context
// is viewed by the backend when the lease opens it and again by the tool job that reads it.
// Records are values (never changed in place), so a context's view stays its view.
const views = new WeakMap<object, SnapshotContextView>();
// A view is read, never stored: its keys may be in the context's order.
const parseView = (value: unknown) => SnapshotContextView.safeParse(value);

/** A context the run machine made, as its view: a shallow copy, no parse. */
const liveView = (context: RunContext): SnapshotContextView => ({ ...context });

/** What runtime code reads of a stored run's machine context: its iteration and calls. */
export function contextView(record: RunRecord): SnapshotContextView | undefined {
  if (record.snapshot === null) return undefined;
  const context = record.snapshot.context;
  const known = views.get(context);
  if (known !== undefined) return known;
  const live = liveContext(context);
  if (live !== undefined) return liveView(live);
  const parsed = parseView(context);
  if (!parsed.success) {
    throw new BackendError(`The stored snapshot of run "${record.runId}" does not parse.`, {
      cause: parsed.error,
    });
  }
  views.set(context, parsed.data);
  return parsed.data;
}

/** The agent a stored run is under now: the one a handoff moved it to, else its own. */
export const currentAgentOf = (record: RunRecord): string =>
  contextView(record)?.agent ?? record.agent;

/** Starts every call key but a first attempt's: no two (id, attempt) pairs share a key. */
const ATTEMPT_MARK = "\u0001";

/**
 * The key of a call's current attempt, under which its in-flight marker and a person's
 * decision are stored, so that every approval round is decided anew. A first attempt's key is
 * the call's id (as earlier versions stored it); after n crash interruptions it is the mark,
 * n, "#" and the id. Ids are any string from the model (`"a#1"` included): an id that starts
 * with the mark takes the long form at attempt 0 too, so keys never collide.
 */
export function callKey(state: { call: { id: string }; interruptions?: number | undefined }) {
  const attempt = state.interruptions ?? 0;
  const { id } = state.call;
  return attempt === 0 && !id.startsWith(ATTEMPT_MARK) ? id : `${ATTEMPT_MARK}${attempt}#${id}`;
}
