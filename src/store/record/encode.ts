import { isDeepStrictEqual } from "node:util";
import {
  type Message,
  type PendingApproval,
  type RunResult,
  USAGE_FIELDS,
} from "../../core/values.js";
import { toRunResult } from "../../engine/run-result.js";
import { idleStageContext, type RunContext } from "../../machines/run-machine.js";
import { conversationOf } from "../conversation.js";
import { isTerminal, type RunRecord } from "../schemas.js";
import type { RunSummary } from "../summary.js";
import { referenceOf, type ToolUses, toolUsesOf, USUAL_REASON, USUAL_STATUS } from "./call-refs.js";
import { SNAPSHOT_DEFAULTS, SUMMARY_FIELDS } from "./document.js";

// The writer of the current version (5) of the stored document: see document.ts for what it
// leaves out, and decode.ts for how each version is read back.

/**
 * The record without its conversation and without what loading derives again, as JSON; with
 * the run's stored `summary` (`summarize(record)`), without what that holds either.
 *
 * Each object of the document is built once, key by key in the record's order, leaving out
 * what the rules of document.ts leave out (rather than spread copies and deletes, which cost
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
    // The conversation is the run's message list, beside the document: never in it.
    if (key === "messages") continue;
    if (key === "input") document.input = compactInput(input);
    else if (key === "snapshot") {
      const { messageCount } = context;
      const counted =
        typeof messageCount === "number" ? messageCount : conversationOf(record).length;
      document.snapshot = compactSnapshot(record, sharedIds, counted, held);
    } else if (key === "result") {
      // A null result is left out where loading derives none (see `derivedResult`).
      if (result === null) {
        if (settled(record.status)) document.result = null;
      } else if (!(sharedIds && derivesResult(record, result))) {
        document.result = { ...result, messages: result.messages.length };
      }
    } else document[key] = record[key as keyof RunRecord];
  }
  if (sharedIds) document.sharedIds = true;
  if (held !== undefined) document.fromSummary = true;
  return JSON.stringify(document);
}

const SUMMARY_KEYS: ReadonlySet<string> = new Set(SUMMARY_FIELDS);

/** The machine's idle stage values, to compare with only (loading fills in fresh ones). */
const IDLE_STAGE: Readonly<Record<string, unknown>> = idleStageContext();

/**
 * Each input's compact form, made once: a run's input does not change, and every save of the
 * run's step holds the same input object (records are copied around it, never it).
 */
const compactInputs = new WeakMap<RunRecord["input"], Record<string, unknown>>();

/** A document's input: its messages counted, a string input's text as `true` (its one message's). */
function compactInput(input: RunRecord["input"]): Record<string, unknown> {
  let compact = compactInputs.get(input);
  if (compact === undefined) {
    compact = compactInputOf(input);
    compactInputs.set(input, compact);
  }
  return compact;
}

function compactInputOf(input: RunRecord["input"]): Record<string, unknown> {
  const text = input.text !== undefined && isTextMessage(input.messages, input.text);
  const compact: Record<string, unknown> = {};
  for (const key in input) {
    if (key === "messages") compact.messages = input.messages.length;
    else if (key === "text" && text) compact.text = true;
    else compact[key] = input[key as keyof typeof input];
  }
  return compact;
}

/** True for a status whose run has a result (a missing one is derived on load). */
const settled = (status: RunRecord["status"]): boolean =>
  status === "awaiting_approval" || isTerminal(status);

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
    // Stored as `messages` (a count), as version 4 has always stored the conversation's length.
    if (key === "messageCount" || key === "messages") compact.messages = messages;
    else if (sharedIds && (key === "runId" || key === "sessionId")) continue;
    else if (held !== undefined && key === "usage" && sameUsage(value, held.usage)) continue;
    else if (held !== undefined && key === "iteration" && value === held.iterations) continue;
    else if (Object.hasOwn(IDLE_STAGE, key) && isInitial(value, IDLE_STAGE[key])) continue;
    else if (key === "maxIterations" && Object.is(value, record.input.maxIterations)) continue;
    else if (key === "calls" && Array.isArray(value)) {
      const uses = value.length === 0 ? undefined : lastToolUses(record, messages);
      compact.calls = value.map((state: Record<string, unknown>) => {
        const at = pending.findIndex((each) => heldBy(state, each));
        const { call, reason, status, ...rest } = state;
        if (at !== -1) return compactHash({ pending: at, ...rest });
        const block = uses === undefined || "m" in state ? -1 : referenceOf(call, uses);
        if (block === -1) return compactHash(state);
        const reference: Record<string, unknown> = { m: block };
        if (status !== USUAL_STATUS) reference.status = status;
        if (reason !== USUAL_REASON) reference.reason = reason;
        for (const field in rest) reference[field] = rest[field];
        return compactHash(reference);
      });
    } else compact[key] = value;
  }
  if (!("messages" in compact)) compact.messages = messages;
  return compact;
}

/**
 * The tool_use blocks of the conversation's last message, when the record holds exactly the
 * `messages` its context counts (so that the store's message list ends with that message).
 */
function lastToolUses(record: RunRecord, messages: number): ToolUses | undefined {
  const conversation = conversationOf(record);
  if (messages === 0 || conversation.length !== messages) return undefined;
  return toolUsesOf(conversation[messages - 1]);
}

const HEX_HASH = /^[0-9a-f]{64}$/;

/** A call state whose SHA-256 `inputHash` (hex) is kept as `ih`, in base64url (21 bytes fewer). */
function compactHash(state: Record<string, unknown>): Record<string, unknown> {
  const { inputHash, ...rest } = state;
  if (typeof inputHash !== "string" || !HEX_HASH.test(inputHash) || "ih" in state) return state;
  return { ...rest, ih: Buffer.from(inputHash, "hex").toString("base64url") };
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

/**
 * True when `value` has `prototype` and `items` own enumerable string-keyed properties (an
 * array's indices counted) and no enumerable inherited one: what `JSON.stringify` and
 * `isDeepStrictEqual` see of plain data. Counted with `for … in`, which allocates no key list
 * (this runs on every save). Symbol and non-enumerable keys are not counted: `JSON.stringify`
 * leaves them out of the document either way.
 */
function isBare(value: object, prototype: object, items: number): boolean {
  if (Object.getPrototypeOf(value) !== prototype) return false;
  let count = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    count += 1;
  }
  return count === items;
}

/**
 * True when `messages` is exactly the one message a string input `text` becomes (`toMessages`:
 * `{ role: "user", content: [{ type: "text", text }] }`), as `isDeepStrictEqual` would say.
 */
function isTextMessage(messages: readonly Message[], text: string): boolean {
  if (!isBareArray(messages, 1)) return false;
  const message: unknown = messages[0];
  if (!hasExactly(message, MESSAGE_KEYS) || message.role !== "user") return false;
  const { content } = message;
  if (!isBareArray(content, 1)) return false;
  const block: unknown = content[0];
  return hasExactly(block, TEXT_BLOCK_KEYS) && block.type === "text" && block.text === text;
}

const MESSAGE_KEYS = ["role", "content"] as const;
const TEXT_BLOCK_KEYS = ["type", "text"] as const;

/** True when `value` is a plain array of `length` items and no other own property. */
function isBareArray(value: unknown, length: number): value is readonly unknown[] {
  return Array.isArray(value) && value.length === length && isBare(value, Array.prototype, length);
}

/** True when `value` is a plain object whose own keys are `keys` (in any order). */
function hasExactly(value: unknown, keys: readonly string[]): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  if (!isBare(value, Object.prototype, keys.length)) return false;
  for (const key of keys) if (!Object.hasOwn(value, key)) return false;
  return true;
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

/** True when the record's result is the one its snapshot gives (so it need not be stored). */
function derivesResult(record: RunRecord, result: RunResult): boolean {
  if (record.status !== result.status || record.snapshot === null) return false;
  const context = record.snapshot.context as unknown as RunContext;
  if (typeof context.messageCount !== "number" || !Array.isArray(context.calls)) return false;
  if (result.messages.length !== context.messageCount) return false;
  const derived = toRunResult(context, result.status, [], record.agent);
  return isDeepStrictEqual({ ...derived, messages: [] }, { ...result, messages: [] });
}
