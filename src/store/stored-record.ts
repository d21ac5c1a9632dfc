import { isDeepStrictEqual } from "node:util";
import { messageOf } from "../core/errors.js";
import type { Message, RunResult } from "../core/values.js";
import { toRunResult } from "../engine/run-result.js";
import type { RunContext } from "../machines/run-machine.js";
import { BackendError } from "./errors.js";
import { corrupt, parseRecordValue } from "./record-codec.js";
import { isTerminal, type RunRecord } from "./schemas.js";
import type { RunSummary } from "./summary.js";

// A run record is stored in two parts, so that storage grows with the conversation and not with
// its square: the conversation as an append-only list of messages (each written once), and the
// rest of the record as one small document in which every copy of the conversation (the
// input's, the machine context's, the result's) is left out and restored from the list on load.
//
// Since schemaVersion 3 the document also leaves out what loading can derive again: a parked or
// finished run's `result` when it is the one its snapshot gives (`toRunResult`; the document
// then has no `result` key), and the run and session ids its machine context repeats (the
// document then says `sharedIds: true`). A version-2 document has neither and loads as it is.
// A backend that stores the run's summary beside the document (Redis) also leaves out what the
// summary holds (`fromSummary: true`): the run's ids, agent, status, phase and times, and the
// snapshot's state value, usage and iteration when they are the summary's phase, usage and
// iterations; loading takes them from the summary.

/** The document's top-level fields a summary holds. */
const SUMMARY_FIELDS = [
  "runId",
  "sessionId",
  "agent",
  "status",
  "phase",
  "createdAt",
  "updatedAt",
] as const;

/** The conversation a record holds: the machine's once started, else the input's. */
export function conversationOf(record: RunRecord): readonly Message[] {
  const context = record.snapshot?.context as { messages?: Message[] } | undefined;
  return context?.messages ?? record.input.messages;
}

/**
 * The record without its conversation and without what loading derives again, as JSON; with
 * the run's stored `summary` (`summarize(record)`), without what that holds either.
 */
export function recordDocument(record: RunRecord, summary?: RunSummary): string {
  const { snapshot, result } = record;
  const messages = conversationOf(record).length;
  const document: Record<string, unknown> = {
    ...record,
    input: { ...record.input, messages: record.input.messages.length },
  };
  if (snapshot === null) return JSON.stringify(document);
  const { runId, sessionId, ...context } = snapshot.context;
  const sharedIds = runId === record.runId && sessionId === record.sessionId;
  document.snapshot = {
    ...snapshot,
    context: sharedIds ? { ...context, messages } : { ...snapshot.context, messages },
  };
  if (sharedIds) document.sharedIds = true;
  if (result === null) document.result = null;
  else if (!(sharedIds && derivesResult(record, result))) {
    document.result = { ...result, messages: result.messages.length };
  } else delete document.result;
  if (summary !== undefined && SUMMARY_FIELDS.every((field) => record[field] === summary[field])) {
    leaveToSummary(document, summary);
  }
  return JSON.stringify(document);
}

/** Drops from `document` what `summary` holds, and says so (`fromSummary`). */
function leaveToSummary(document: Record<string, unknown>, summary: RunSummary): void {
  for (const field of SUMMARY_FIELDS) delete document[field];
  document.fromSummary = true;
  const snapshot = document.snapshot as { value?: unknown; context: Record<string, unknown> };
  if (snapshot.value === summary.phase) delete snapshot.value;
  const { context } = snapshot;
  if (sameUsage(context.usage, summary.usage)) delete context.usage;
  if (context.iteration === summary.iterations) delete context.iteration;
}

const USAGE_FIELDS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
] as const;

/**
 * True when the context's `usage` is deeply equal to the summary's: the same four counts and
 * nothing else (what `isDeepStrictEqual` would say of these plain objects, at a fraction of
 * its cost on every save).
 */
function sameUsage(usage: unknown, summarized: RunSummary["usage"]): boolean {
  if (typeof usage !== "object" || usage === null || Array.isArray(usage)) return false;
  if (Object.getPrototypeOf(usage) !== Object.prototype) return false;
  if (Object.keys(usage).length !== USAGE_FIELDS.length) return false;
  const counts = usage as Record<string, unknown>;
  return USAGE_FIELDS.every(
    (field) => Object.hasOwn(counts, field) && Object.is(counts[field], summarized[field]),
  );
}

/** A document that says `fromSummary`, completed from the run's summary. */
function fromSummary(stored: Record<string, unknown>, summary: RunSummary | undefined) {
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

/** True when the record's result is the one its snapshot gives (so it need not be stored). */
function derivesResult(record: RunRecord, result: RunResult): boolean {
  if (record.status !== result.status || record.snapshot === null) return false;
  const context = record.snapshot.context as unknown as RunContext;
  if (!Array.isArray(context.messages) || !Array.isArray(context.calls)) return false;
  if (result.messages.length !== context.messages.length) return false;
  const derived = toRunResult(context, result.status);
  return isDeepStrictEqual({ ...derived, messages: [] }, { ...result, messages: [] });
}

/**
 * A record rebuilt from its document, the stored conversation (JSON of each message) and, for a
 * document that says `fromSummary`, the run's stored summary.
 */
export function joinRecord(
  document: string,
  conversation: readonly string[],
  summary?: RunSummary,
): RunRecord {
  let parsedDocument: unknown;
  let messages: unknown[];
  try {
    parsedDocument = JSON.parse(document);
    messages = conversation.map((json) => JSON.parse(json) as unknown);
  } catch (error) {
    throw corrupt("A stored run record", `not valid JSON (${messageOf(error)})`);
  }
  if (typeof parsedDocument !== "object" || parsedDocument === null) {
    throw corrupt("A stored run record", "not a JSON object");
  }
  const { sharedIds, fromSummary: summarized, ...own } = parsedDocument as Record<string, unknown>;
  const stored = (summarized === true ? fromSummary(own, summary) : own) as {
    runId?: unknown;
    sessionId?: unknown;
    status?: unknown;
    sharedIds?: unknown;
    input?: { messages?: unknown };
    snapshot?: { context?: { messages?: unknown } } | null;
    result?: { messages?: unknown } | null;
  };
  const prefix = (length: unknown): unknown[] =>
    typeof length === "number" ? messages.slice(0, length) : [];
  const snapshot =
    stored.snapshot == null
      ? null
      : {
          ...stored.snapshot,
          context: {
            ...(sharedIds === true ? { runId: stored.runId, sessionId: stored.sessionId } : {}),
            ...stored.snapshot.context,
            messages: prefix(stored.snapshot.context?.messages),
          },
        };
  const joined = {
    ...stored,
    input: { ...stored.input, messages: prefix(stored.input?.messages) },
    snapshot,
    result:
      stored.result === undefined
        ? derivedResult(stored.status, snapshot?.context)
        : stored.result === null
          ? null
          : { ...stored.result, messages: prefix(stored.result.messages) },
  };
  return parseRecordValue(joined);
}

/** The result a document left out: the one its snapshot gives for its status. */
function derivedResult(status: unknown, context: unknown): RunResult | null {
  const settled = status === "awaiting_approval" || isTerminalStatus(status);
  if (!settled || typeof context !== "object" || context === null) return null;
  try {
    return toRunResult(context as RunContext, status);
  } catch (error) {
    throw new BackendError("A stored run record's snapshot does not give its result.", {
      cause: error,
    });
  }
}

const isTerminalStatus = (status: unknown): status is "completed" | "failed" | "cancelled" =>
  typeof status === "string" && isTerminal(status as RunRecord["status"]);
