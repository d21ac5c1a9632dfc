import { isDeepStrictEqual } from "node:util";
import { messageOf } from "../core/errors.js";
import {
  type Message,
  type PendingApproval,
  type RunResult,
  USAGE_FIELDS,
} from "../core/values.js";
import { toRunResult } from "../engine/run-result.js";
import { idleStageContext, type RunContext } from "../machines/run-machine.js";
import { BackendError } from "./errors.js";
import { corrupt, parseRecordValue } from "./record-codec.js";
import { isTerminal, RUN_RECORD_VERSION, RunRecord } from "./schemas.js";
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
//
// Since schemaVersion 4 the document also leaves out the values loading can fill in again
// (see `compactSnapshot`): the snapshot's and its context's fields that hold their initial
// value, the context's `maxIterations` when it is the input's, a string input's text (the
// document says `text: true`: it is its one message's), and, beside a summary, each parked
// call that the summary's pending list holds (the document keeps `pending: <its index>` in
// place of its call, its status "asked" and its reason). A call's SHA-256 input hash is kept
// in base64url (`ih`) rather than hex.

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
 *
 * Each object of the document is built once, key by key in the record's order, leaving out
 * what the version-4 rules above leave out (rather than spread copies and deletes, which cost
 * an object per step and turn the objects into slow dictionaries before they are serialised).
 */
export function recordDocument(record: RunRecord, summary?: RunSummary): string {
  const { snapshot, result, input } = record;
  if (snapshot === null) {
    return JSON.stringify({ ...record, input: { ...input, messages: input.messages.length } });
  }
  const { context } = snapshot;
  const sharedIds = context.runId === record.runId && context.sessionId === record.sessionId;
  const besideSummary =
    summary !== undefined && SUMMARY_FIELDS.every((field) => record[field] === summary[field]);
  const held = besideSummary ? summary : undefined;
  const document: Record<string, unknown> = {};
  for (const key in record) {
    if (held !== undefined && SUMMARY_KEYS.has(key)) continue;
    if (key === "input") document.input = compactInput(input);
    else if (key === "snapshot") {
      document.snapshot = compactSnapshot(record, sharedIds, conversationOf(record).length, held);
    } else if (key === "result") {
      if (result === null) document.result = null;
      else if (!(sharedIds && derivesResult(record, result))) {
        document.result = { ...result, messages: result.messages.length };
      }
    } else document[key] = record[key as keyof RunRecord];
  }
  if (sharedIds) document.sharedIds = true;
  if (held !== undefined) document.fromSummary = true;
  return JSON.stringify(document);
}

/** What a version-4 document leaves out of a snapshot when it holds these values. */
const SNAPSHOT_DEFAULTS: Readonly<Record<string, unknown>> = {
  status: "active",
  historyValue: {},
  children: {},
};

const SUMMARY_KEYS: ReadonlySet<string> = new Set(SUMMARY_FIELDS);

/** The machine's idle stage values, to compare with only (loading fills in fresh ones). */
const IDLE_STAGE: Readonly<Record<string, unknown>> = idleStageContext();

/** A document's input: its messages counted, a string input's text as `true` (its one message's). */
function compactInput(input: RunRecord["input"]): Record<string, unknown> {
  const text = input.text !== undefined && isTextMessage(input.messages, input.text);
  const compact: Record<string, unknown> = {};
  for (const key in input) {
    if (key === "messages") compact.messages = input.messages.length;
    else if (key === "text" && text) compact.text = true;
    else compact[key] = input[key as keyof typeof input];
  }
  return compact;
}

/**
 * A document's snapshot: without its initial values (`SNAPSHOT_DEFAULTS`, the idle stage, the
 * input's `maxIterations`), the ids its context shares with the record (`sharedIds`), the
 * conversation (its length), and what the summary `held` beside it holds: the state value,
 * usage and iteration when they are its phase, usage and iterations, and each parked call its
 * pending list holds (`pending: <its index>`). A call's hex input hash is kept in base64url.
 */
function compactSnapshot(
  record: RunRecord,
  sharedIds: boolean,
  messages: number,
  held: RunSummary | undefined,
): Record<string, unknown> {
  const snapshot = record.snapshot as NonNullable<RunRecord["snapshot"]>;
  const compact: Record<string, unknown> = {};
  for (const key in snapshot) {
    const value = snapshot[key];
    if (key === "context") compact.context = compactContext(record, sharedIds, messages, held);
    else if (key === "value" && held !== undefined && value === held.phase) continue;
    else if (!(Object.hasOwn(SNAPSHOT_DEFAULTS, key) && isInitial(value, SNAPSHOT_DEFAULTS[key]))) {
      compact[key] = value;
    }
  }
  return compact;
}

function compactContext(
  record: RunRecord,
  sharedIds: boolean,
  messages: number,
  held: RunSummary | undefined,
): Record<string, unknown> {
  const context = (record.snapshot as NonNullable<RunRecord["snapshot"]>).context;
  const pending = held?.pending ?? [];
  const compact: Record<string, unknown> = {};
  for (const key in context) {
    const value = context[key];
    if (key === "messages") compact.messages = messages;
    else if (sharedIds && (key === "runId" || key === "sessionId")) continue;
    else if (held !== undefined && key === "usage" && sameUsage(value, held.usage)) continue;
    else if (held !== undefined && key === "iteration" && value === held.iterations) continue;
    else if (Object.hasOwn(IDLE_STAGE, key) && isInitial(value, IDLE_STAGE[key])) continue;
    else if (key === "maxIterations" && Object.is(value, record.input.maxIterations)) continue;
    else if (key === "calls" && Array.isArray(value)) {
      compact.calls = value.map((state: Record<string, unknown>) => {
        const at = pending.findIndex((each) => heldBy(state, each));
        const { call: _call, reason: _reason, status: _status, ...rest } = state;
        return compactHash(at === -1 ? state : { pending: at, ...rest });
      });
    } else compact[key] = value;
  }
  if (!("messages" in compact)) compact.messages = messages;
  return compact;
}

const HEX_HASH = /^[0-9a-f]{64}$/;

/** A call state whose SHA-256 `inputHash` (hex) is kept as `ih`, in base64url (21 bytes fewer). */
function compactHash(state: Record<string, unknown>): Record<string, unknown> {
  const { inputHash, ...rest } = state;
  if (typeof inputHash !== "string" || !HEX_HASH.test(inputHash) || "ih" in state) return state;
  return { ...rest, ih: Buffer.from(inputHash, "hex").toString("base64url") };
}

/** `compactHash` undone. */
function restoreHash(state: Record<string, unknown>): Record<string, unknown> {
  const { ih, ...rest } = state;
  if (typeof ih !== "string") return state;
  return { ...rest, inputHash: Buffer.from(ih, "base64url").toString("hex") };
}

/** True when a call's state says no more about the call than the pending entry `entry`. */
function heldBy(state: Record<string, unknown>, entry: PendingApproval): boolean {
  const { toolCallId, name, input, reason } = entry;
  return (
    !("pending" in state) &&
    state.status === "asked" &&
    state.reason === reason &&
    isDeepStrictEqual(state.call, { id: toolCallId, name, input })
  );
}

/**
 * `isDeepStrictEqual(value, initial)` for the initial values documents leave out (primitives,
 * `[]` and `{}`), without its cost on every save; anything else is compared by it.
 */
function isInitial(value: unknown, initial: unknown): boolean {
  if (typeof initial !== "object" || initial === null) return Object.is(value, initial);
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(initial) && initial.length === 0) {
    return isBareArray(value, 0);
  }
  if (Object.getPrototypeOf(initial) === Object.prototype && Object.keys(initial).length === 0) {
    return !Array.isArray(value) && isBare(value, Object.prototype, 0);
  }
  return isDeepStrictEqual(value, initial);
}

/** True when `value` has `prototype` and `items` own properties (an array's `length` aside). */
function isBare(value: object, prototype: object, items: number): boolean {
  if (Object.getPrototypeOf(value) !== prototype) return false;
  return Reflect.ownKeys(value).length === items + (Array.isArray(value) ? 1 : 0);
}

/**
 * True when `messages` is exactly the one message a string input `text` becomes (`toMessages`:
 * `{ role: "user", content: [{ type: "text", text }] }`), as `isDeepStrictEqual` would say.
 */
function isTextMessage(messages: readonly Message[], text: string): boolean {
  if (!isBareArray(messages, 1)) return false;
  const message: unknown = messages[0];
  if (!hasExactly(message, ["role", "content"]) || message.role !== "user") return false;
  const { content } = message;
  if (!isBareArray(content, 1)) return false;
  const block: unknown = content[0];
  return hasExactly(block, ["type", "text"]) && block.type === "text" && block.text === text;
}

/** True when `value` is a plain array of `length` items and no other own property. */
function isBareArray(value: unknown, length: number): value is readonly unknown[] {
  return Array.isArray(value) && value.length === length && isBare(value, Array.prototype, length);
}

/** True when `value` is a plain object whose own keys are `keys` (in any order). */
function hasExactly(value: unknown, keys: readonly string[]): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  const own = Reflect.ownKeys(value);
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key));
}

/** A version-4 document's call states, as `compactContext` stored them, restored. */
function restoreCalls(calls: readonly unknown[], pending: readonly PendingApproval[]): unknown[] {
  return calls.map((stored) => {
    const state =
      typeof stored === "object" && stored !== null
        ? restoreHash(stored as Record<string, unknown>)
        : (stored as Record<string, unknown> | null | undefined);
    if (typeof state?.pending !== "number") return state;
    const { pending: at, ...rest } = state;
    const entry = pending[at as number];
    if (entry === undefined) {
      throw corrupt(
        "A stored run record",
        "a parked call refers to a pending call its summary does not hold",
      );
    }
    const { toolCallId, name, input: callInput, reason } = entry;
    return {
      call: { id: toolCallId, name, input: callInput },
      status: "asked",
      ...rest,
      reason,
    };
  });
}

/** What `compactInput` and `compactSnapshot` left out, filled in again (version 4 or later). */
function restoreDocument(stored: Record<string, unknown>, pending: readonly PendingApproval[]) {
  const input = stored.input as { text?: unknown; maxIterations?: unknown } | undefined;
  const snapshot = stored.snapshot as Record<string, unknown> | null | undefined;
  if (snapshot == null) return stored;
  const context = (snapshot.context ?? {}) as Record<string, unknown>;
  const calls = Array.isArray(context.calls) ? restoreCalls(context.calls, pending) : undefined;
  return {
    ...stored,
    snapshot: {
      ...SNAPSHOT_DEFAULTS,
      ...snapshot,
      context: {
        ...idleStageContext(),
        maxIterations: input?.maxIterations,
        ...context,
        ...(calls === undefined ? {} : { calls }),
      },
    },
  };
}

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

/** A stored document's JSON parsed: a `record_corrupt` BackendError unless it is an object. */
export function parseDocument(document: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(document);
  } catch (error) {
    throw corrupt("A stored run record", `not valid JSON (${messageOf(error)})`);
  }
  if (typeof parsed !== "object" || parsed === null) {
    throw corrupt("A stored run record", "not a JSON object");
  }
  return parsed as Record<string, unknown>;
}

/** A parsed document with what it left out filled in again, but its conversation. */
export interface CompletedDocument {
  /** The record's fields; the conversation's copies are message counts (prefix lengths). */
  stored: Record<string, unknown>;
  /** The machine context leaves out the run and session ids: they are the record's. */
  sharedIds: boolean;
  /** A version-4 (or later) document: a string input's text may be left to its message. */
  compacted: boolean;
}

/**
 * A parsed document (`parseDocument`) completed from the run's stored summary (when it says
 * `fromSummary`) and with the values a version-4 document leaves out restored; the
 * conversation stays out (see `joinRecord`).
 */
export function completeDocument(
  parsed: Record<string, unknown>,
  summary?: RunSummary,
): CompletedDocument {
  const { sharedIds, fromSummary: summarized, ...own } = parsed;
  const completed = summarized === true ? fromSummary(own, summary) : own;
  const compacted = typeof own.schemaVersion === "number" && own.schemaVersion >= 4;
  return {
    stored: compacted ? restoreDocument(completed, summary?.pending ?? []) : completed,
    sharedIds: sharedIds === true,
    compacted,
  };
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
  const parsed = parseDocument(document);
  let messages: unknown[];
  try {
    messages = conversation.map((json) => JSON.parse(json) as unknown);
  } catch (error) {
    throw corrupt("A stored run record", `not valid JSON (${messageOf(error)})`);
  }
  return parseRecordValue(
    joinCurrent(parsed, messages, summary) ?? joinAny(parsed, messages, summary),
  );
}

/** The keys a version-4 document written by `recordDocument` may have. */
const CURRENT_KEYS: ReadonlySet<string> = new Set([
  ...Object.keys(RunRecord.shape),
  "sharedIds",
  "fromSummary",
]);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.getPrototypeOf(value) === Object.prototype;

/**
 * The record a document of the current version stands for, built at once in the order the
 * record schema parses into (so that its parse copies nothing): what `joinAny` gives such a
 * document, without its chain of spread copies. Undefined for a document it does not take as
 * `recordDocument` writes them (another version, a key of its own, a field missing…): `joinAny`
 * reads that one, and its parse names what is wrong.
 */
function joinCurrent(
  document: Record<string, unknown>,
  messages: unknown[],
  summary: RunSummary | undefined,
): Record<string, unknown> | undefined {
  if (document.schemaVersion !== RUN_RECORD_VERSION) return undefined;
  for (const key in document) if (!CURRENT_KEYS.has(key)) return undefined;
  const { sharedIds, fromSummary: summarized, input, snapshot: stored, result } = document;
  if ((sharedIds !== undefined && sharedIds !== true) || !isPlainObject(input)) return undefined;
  let top: Record<string, unknown> | RunSummary = document;
  if (summarized === true) {
    if (summary === undefined || SUMMARY_FIELDS.some((field) => field in document))
      return undefined;
    top = summary;
  } else if (summarized !== undefined || !SUMMARY_FIELDS.every((field) => field in document)) {
    return undefined;
  }
  const prefix = (length: unknown): unknown[] =>
    typeof length === "number" ? messages.slice(0, length) : [];
  const inputMessages = prefix(input.messages);
  for (const key in input)
    if (key !== "messages" && key !== "text" && key !== "maxIterations") return undefined;
  const joinedInput: Record<string, unknown> = { messages: inputMessages };
  if ("text" in input) joinedInput.text = input.text === true ? textOf(inputMessages) : input.text;
  if ("maxIterations" in input) joinedInput.maxIterations = input.maxIterations;
  let snapshot: Record<string, unknown> | null = null;
  if (stored != null) {
    if (!isPlainObject(stored) || !isPlainObject(stored.context)) return undefined;
    const value =
      "value" in stored ? stored.value : summarized === true ? summary?.phase : undefined;
    if (value === undefined) return undefined;
    // The context's keys in the order `joinAny` gives them (a restored machine keeps it, and
    // later saves store it): the ids, the idle stage, maxIterations, the summary's usage and
    // iteration, then the document's own; its values win over all but the restored calls
    // and the conversation.
    const context: Record<string, unknown> = {};
    if (sharedIds === true) {
      context.runId = top.runId;
      context.sessionId = top.sessionId;
    }
    const idle = idleStageContext() as Record<string, unknown>;
    for (const key in idle) context[key] = idle[key];
    context.maxIterations = input.maxIterations;
    if (summarized === true) {
      context.usage = summary?.usage;
      context.iteration = summary?.iterations;
    }
    const own = stored.context;
    for (const key in own) {
      if (key === "__proto__") return undefined;
      context[key] = own[key];
    }
    if (Array.isArray(own.calls)) context.calls = restoreCalls(own.calls, summary?.pending ?? []);
    context.messages = prefix(own.messages);
    snapshot = {
      status: "status" in stored ? stored.status : SNAPSHOT_DEFAULTS.status,
      value,
      context,
      historyValue: "historyValue" in stored ? stored.historyValue : {},
      children: "children" in stored ? stored.children : {},
    };
    for (const key in stored) {
      if (key === "__proto__") return undefined;
      if (!(key in snapshot)) snapshot[key] = stored[key];
    }
  }
  const record: Record<string, unknown> = {
    schemaVersion: RUN_RECORD_VERSION,
    runId: top.runId,
    sessionId: top.sessionId,
    agent: top.agent,
    status: top.status,
    phase: top.phase,
    input: joinedInput,
    snapshot,
    result:
      result === undefined
        ? derivedResult(top.status, snapshot?.context)
        : isPlainObject(result)
          ? { ...result, messages: prefix(result.messages) }
          : result,
    createdAt: top.createdAt,
    updatedAt: top.updatedAt,
  };
  for (const field of ["trace", "priority", "secretInputs"] as const) {
    if (field in document) record[field] = document[field];
  }
  return record;
}

/** A record rebuilt from a document of any version this one reads, not parsed yet. */
function joinAny(
  parsedDocument: Record<string, unknown>,
  messages: unknown[],
  summary: RunSummary | undefined,
): unknown {
  const completed = completeDocument(parsedDocument, summary);
  const { sharedIds, compacted } = completed;
  const stored = completed.stored as {
    runId?: unknown;
    sessionId?: unknown;
    status?: unknown;
    sharedIds?: unknown;
    input?: { messages?: unknown; text?: unknown };
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
            ...(sharedIds ? { runId: stored.runId, sessionId: stored.sessionId } : {}),
            ...stored.snapshot.context,
            messages: prefix(stored.snapshot.context?.messages),
          },
        };
  const inputMessages = prefix(stored.input?.messages);
  const joined = {
    ...stored,
    input: {
      ...stored.input,
      messages: inputMessages,
      ...(compacted && stored.input?.text === true ? { text: textOf(inputMessages) } : {}),
    },
    snapshot,
    result:
      stored.result === undefined
        ? derivedResult(stored.status, snapshot?.context)
        : stored.result === null
          ? null
          : { ...stored.result, messages: prefix(stored.result.messages) },
  };
  return joined;
}

/** The text of a string input's one message (`textMessage`), as a document left it out. */
function textOf(messages: readonly unknown[]): unknown {
  const [message] = messages as Array<{ content?: Array<{ text?: unknown }> } | undefined>;
  return message?.content?.[0]?.text;
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
