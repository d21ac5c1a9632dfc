import { messageOf } from "../../core/errors.js";
import type { Message, RunResult } from "../../core/values.js";
import { toRunResult } from "../../engine/run-result.js";
import { idleStageContext, type RunContext } from "../../machines/run-machine.js";
import { BackendError } from "../errors.js";
import { isTerminal, RUN_RECORD_VERSION, RunRecord } from "../schemas.js";
import type { RunSummary } from "../summary.js";
import { corrupt, parseRecordValue } from "./codec.js";
import { fromSummary } from "./decode-v3.js";
import { restoreCalls, restoreDocument } from "./decode-v4.js";
import { isPlainObject, SNAPSHOT_DEFAULTS, SUMMARY_FIELDS } from "./document.js";

/** The record's optional fields a document holds as they are. */
const RECORD_EXTRAS = [
  "trace",
  "priority",
  "secretInputs",
  "parentRunId",
  "parentToolCallId",
  "rootRunId",
] as const;

// Reading a stored document back, whatever version wrote it: one decoder per version fills in
// what that version left out (`DECODERS`), then the record is joined with its conversation and
// parsed. The current version also has a direct path (`joinCurrent`) that builds the record at
// once; frozen fixtures of every version (test/fixtures/run-records) keep both honest.

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
 * The conversation's message at an index, as far as the reader has it (undefined beyond): a
 * version-5 document's calls may refer to its last message's blocks.
 */
export type MessageAt = (index: number) => unknown;

/** What a document of one version left out, filled in again (all but the conversation). */
type Decoder = (
  document: Record<string, unknown>,
  summary: RunSummary | undefined,
  messageAt: MessageAt,
) => Record<string, unknown>;

/** The document without the marks that say what it left out. */
function withoutMarks(document: Record<string, unknown>): Record<string, unknown> {
  const { sharedIds: _sharedIds, fromSummary: _fromSummary, ...own } = document;
  return own;
}

/** A reader given none of the conversation. */
const noMessages: MessageAt = () => undefined;

/** Version 2 left nothing out: it loads as it is. */
const decodeV2: Decoder = (document) => withoutMarks(document);

/** Version 3: what the run's summary holds, taken from it (`fromSummary`). */
const decodeV3: Decoder = (document, summary) => {
  const own = withoutMarks(document);
  return document.fromSummary === true ? fromSummary(own, summary) : own;
};

/** Version 4: version 3's, then the values left out at their initial ones. */
const decodeV4: Decoder = (document, summary, messageAt) =>
  restoreDocument(decodeV3(document, summary, messageAt), summary?.pending ?? []);

/** Version 5: version 4's, and the calls kept by reference to the last message's blocks. */
const decodeV5: Decoder = (document, summary, messageAt) =>
  restoreDocument(decodeV3(document, summary, messageAt), summary?.pending ?? [], messageAt);

/**
 * The decoder of each version this one reads. A document of any other version is read by the
 * rules of the nearest (so its parse can name what is wrong) and refused by its version as the
 * record is parsed (`StoreVersionError`).
 */
const DECODERS: ReadonlyMap<unknown, Decoder> = new Map<unknown, Decoder>([
  [2, decodeV2],
  [3, decodeV3],
  [4, decodeV4],
  [5, decodeV5],
]);

/** True for a document of version 4 or later: a string input's text may be left to its message. */
const isCompacted = (version: unknown): boolean => typeof version === "number" && version >= 4;

/**
 * A parsed document (`parseDocument`) with what its version left out filled in again (from the
 * run's stored summary, when it says `fromSummary`, and the conversation's last message, for
 * calls kept by reference); the conversation stays out (see `joinRecord`).
 */
export function completeDocument(
  parsed: Record<string, unknown>,
  summary?: RunSummary,
  messageAt: MessageAt = noMessages,
): CompletedDocument {
  const version = parsed.schemaVersion;
  const compacted = isCompacted(version);
  const decode = DECODERS.get(version) ?? (compacted ? decodeV5 : decodeV3);
  return {
    stored: decode(parsed, summary, messageAt),
    sharedIds: parsed.sharedIds === true,
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

/** The keys a current document written by `recordDocument` may have (listed on first use). */
let currentKeys: ReadonlySet<string> | undefined;
const currentKeysOf = (): ReadonlySet<string> => {
  currentKeys ??= new Set([...Object.keys(RunRecord.shape), "sharedIds", "fromSummary"]);
  return currentKeys;
};

/**
 * The record a document of the current version stands for, built at once in the order the
 * record schema parses into (so that its parse copies nothing): what `joinAny` gives such a
 * document, without its chain of spread copies. Undefined for a document it does not take as
 * `recordDocument` writes them (another version, a key of its own, a field missing…): `joinAny`
 * reads that one, and its parse names what is wrong. `withResult: false` (a reader that needs
 * neither the result nor the conversation, given none): the result is left null; `messageAt`
 * then gives what it has of the conversation (the last message, for calls kept by reference).
 */
export function joinCurrent(
  document: Record<string, unknown>,
  messages: unknown[],
  summary: RunSummary | undefined,
  withResult = true,
  messageAt: MessageAt = (index) => messages[index],
): Record<string, unknown> | undefined {
  if (document.schemaVersion !== RUN_RECORD_VERSION) return undefined;
  const keys = currentKeysOf();
  for (const key in document) if (!keys.has(key)) return undefined;
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
  let counted: unknown = 0;
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
      // The conversation's count: the machine's `messageCount`; the messages go to the record.
      if (key === "messages") context.messageCount = own.messages;
      else context[key] = own[key];
    }
    if (Array.isArray(own.calls)) {
      const count = own.messages;
      const last = () => (typeof count === "number" ? messageAt(count - 1) : undefined);
      context.calls = restoreCalls(own.calls, summary?.pending ?? [], last);
    }
    if (!("messageCount" in context)) context.messageCount = 0;
    counted = context.messageCount;
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
    ...(snapshot === null ? {} : { messages: prefix(counted) }),
    result: !withResult
      ? null
      : result === undefined
        ? derivedResult(top.status, snapshot?.context, messages, top.agent)
        : isPlainObject(result)
          ? // A result stored before results named their agent: the record's.
            { agent: top.agent, ...result, messages: prefix(result.messages) }
          : result,
    createdAt: top.createdAt,
    updatedAt: top.updatedAt,
  };
  for (const field of RECORD_EXTRAS) {
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
  const completed = completeDocument(parsedDocument, summary, (index) => messages[index]);
  const { sharedIds, compacted } = completed;
  const stored = completed.stored as {
    runId?: unknown;
    sessionId?: unknown;
    agent?: unknown;
    status?: unknown;
    sharedIds?: unknown;
    input?: { messages?: unknown; text?: unknown };
    snapshot?: { context?: { messages?: unknown } } | null;
    result?: { messages?: unknown } | null;
  };
  const prefix = (length: unknown): unknown[] =>
    typeof length === "number" ? messages.slice(0, length) : [];
  let snapshot: { context: Record<string, unknown> } | null = null;
  if (stored.snapshot != null) {
    const context: Record<string, unknown> = sharedIds
      ? { runId: stored.runId, sessionId: stored.sessionId }
      : {};
    const own: Record<string, unknown> = stored.snapshot.context ?? {};
    // The conversation's count: the machine's `messageCount`, where the document had it.
    for (const key in own) context[key === "messages" ? "messageCount" : key] = own[key];
    if (typeof context.messageCount !== "number") context.messageCount = 0;
    snapshot = { ...stored.snapshot, context };
  }
  const inputMessages = prefix(stored.input?.messages);
  const joined = {
    ...stored,
    input: {
      ...stored.input,
      messages: inputMessages,
      ...(compacted && stored.input?.text === true ? { text: textOf(inputMessages) } : {}),
    },
    snapshot,
    ...(snapshot === null ? {} : { messages: prefix(snapshot.context.messageCount) }),
    result:
      stored.result === undefined
        ? derivedResult(stored.status, snapshot?.context, messages, stored.agent)
        : stored.result === null
          ? null
          : { agent: stored.agent, ...stored.result, messages: prefix(stored.result.messages) },
  };
  return joined;
}

/** The text of a string input's one message (`textMessage`), as a document left it out. */
function textOf(messages: readonly unknown[]): unknown {
  const [message] = messages as Array<{ content?: Array<{ text?: unknown }> } | undefined>;
  return message?.content?.[0]?.text;
}

/**
 * The result a document left out: the one its snapshot gives for its status (`agent`: the
 * record's, for a snapshot that does not name its agent).
 */
function derivedResult(
  status: unknown,
  context: unknown,
  messages: readonly unknown[],
  agent: unknown,
): RunResult | null {
  const settled = status === "awaiting_approval" || isTerminalStatus(status);
  if (!settled || typeof context !== "object" || context === null) return null;
  try {
    return toRunResult(
      context as RunContext,
      status,
      messages as Message[],
      typeof agent === "string" ? agent : "",
    );
  } catch (error) {
    throw new BackendError("A stored run record's snapshot does not give its result.", {
      cause: error,
    });
  }
}

const isTerminalStatus = (status: unknown): status is "completed" | "failed" | "cancelled" =>
  typeof status === "string" && isTerminal(status as RunRecord["status"]);
