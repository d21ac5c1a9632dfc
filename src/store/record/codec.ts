import type { z } from "zod";
import { messageOf } from "../../core/errors.js";
import { describeIssues } from "../../tools/validate.js";
import { BackendError, StoreVersionError } from "../errors.js";
import { RUN_RECORD_VERSION, RunRecord } from "../schemas.js";
import { typedRecord } from "./typed-decode.js";

// Every piece of stored data (records, summaries, decisions, audit entries, raw results) is read
// here: data that is not JSON or not of its shape is refused with one error, a `BackendError`
// with `code: "record_corrupt"`, never a raw SyntaxError or ZodError.

/** A `record_corrupt` BackendError about `what` (e.g. 'The stored summary of run "r1"'). */
export const corrupt = (what: string, problem: string, cause?: unknown): BackendError =>
  new BackendError(`${what} is corrupt: ${problem}.`, {
    code: "record_corrupt",
    ...(cause === undefined ? {} : { cause }),
  });

/** Parses stored JSON as `schema`; throws a `record_corrupt` BackendError naming `what`. */
export function decodeStored<T>(schema: z.ZodType<T>, json: string, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw corrupt(what, `not valid JSON (${messageOf(error)})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw corrupt(what, describeIssues(parsed.error.issues));
  return parsed.data;
}

/**
 * Earlier versions whose records have the current shape once loaded: 2 to 5 differ only in
 * how a stored document leaves derivable parts out (see document.ts), so a record or document
 * of version 2, 3 or 4 is read as a version-5 one.
 */
const READ_AS_CURRENT: ReadonlySet<unknown> = new Set([2, 3, 4]);

/**
 * Reads a stored run record's JSON: a record of another `schemaVersion` is refused with
 * `StoreVersionError`, one that does not parse with a `record_corrupt` `BackendError`; neither is ever misread.
 */
export function parseStoredRecord(json: string): RunRecord {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw corrupt("A stored run record", `not valid JSON (${messageOf(error)})`);
  }
  return parseRecordValue(value);
}

/**
 * Throws `StoreVersionError` unless `stored` (a record, or a stored document) is of a
 * `schemaVersion` this version reads; returns that version.
 */
export function assertReadableVersion(stored: object): unknown {
  const version = "schemaVersion" in stored ? stored.schemaVersion : undefined;
  if (version !== RUN_RECORD_VERSION && !READ_AS_CURRENT.has(version)) {
    const runId = "runId" in stored && typeof stored.runId === "string" ? stored.runId : "?";
    throw new StoreVersionError(runId, version, RUN_RECORD_VERSION);
  }
  return version;
}

/** `RunRecord.safeParse`. */
const parseRecord = (value: unknown) => RunRecord.safeParse(value);

/** A result stored before results named their agent names the record's (no handoff then). */
function withResultAgent(value: unknown): unknown {
  if (typeof value !== "object" || value === null || !("result" in value)) return value;
  const { result } = value as { result: unknown };
  if (typeof result !== "object" || result === null || "agent" in result) return value;
  const agent = "agent" in value ? value.agent : undefined;
  return { ...value, result: { agent, ...result } };
}

/** `parseStoredRecord` for a record already parsed from JSON. */
export function parseRecordValue(value: unknown): RunRecord {
  const stored = typeof value === "object" && value !== null ? value : {};
  const version = assertReadableVersion(stored);
  // The record a step leases, in its usual form, needs no parse (its checks are typed-decode's).
  const typed = typedRecord(value, RUN_RECORD_VERSION);
  if (typed !== undefined) return typed as RunRecord;
  const current = withResultAgent(
    version === RUN_RECORD_VERSION ? value : { ...stored, schemaVersion: RUN_RECORD_VERSION },
  );
  const parsed = parseRecord(conversationApart(current));
  if (!parsed.success) {
    const runId = "runId" in stored && typeof stored.runId === "string" ? stored.runId : "?";
    throw corrupt(`The stored record of run "${runId}"`, describeIssues(parsed.error.issues));
  }
  return parsed.data;
}

/**
 * A whole record (not a document) whose machine context holds the conversation, as records
 * were kept before it moved out of the machine: the messages go to the record's log, their
 * count stays in the context (`messageCount`, where `messages` was). Anything else as it is.
 */
function conversationApart(value: unknown): unknown {
  if (!isObject(value) || !isObject(value.snapshot) || "messages" in value) return value;
  const { context } = value.snapshot;
  if (!isObject(context) || !Array.isArray(context.messages)) return value;
  const moved: Record<string, unknown> = {};
  for (const key in context) {
    if (key === "messages") moved.messageCount = context.messages.length;
    else moved[key] = context[key];
  }
  const record: Record<string, unknown> = {};
  for (const key in value) {
    record[key] = key === "snapshot" ? { ...value.snapshot, context: moved } : value[key];
    if (key === "snapshot") record.messages = context.messages;
  }
  return record;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
