import { USAGE_FIELDS, type Usage } from "../../core/values.js";
import type { CallState } from "../../machines/call-state.js";
import { isRunRecordStatus } from "../schemas.js";
import type { RunSummary } from "../summary.js";
import { isPlainObject } from "./document.js";

// Typed decodes of the stored shapes a worker reads on every job, for their usual form only:
// each checks in place what the zod schema checks and builds the value its parse gives (the
// same keys, in the schema's order). A value it is not sure of (another form, an optional part
// it does not check) it leaves to the caller's zod parse (undefined), so it takes only what
// zod takes, and zod still names what is wrong with the rest. Zod's parse of these shapes
// cost a worker about 15 KB and 40 µs a run (a copy of every object, issues for each union
// option tried), on data the worker's own version wrote a few milliseconds before.

const isName = (value: unknown): value is string => typeof value === "string" && value.length > 0;
const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const isTime = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value);

/** The phase a run of each of these statuses is in unless its summary says another. */
export const USUAL_PHASE: ReadonlyMap<unknown, string> = new Map([
  ["queued", "compose"],
  ["awaiting_approval", "awaitingApproval"],
  ["completed", "done"],
]);

/**
 * A stored summary of the short form (summary-codec.ts) with nothing pending, no error and
 * counts as JSON gives them, as `RunSummary`'s parse of its expanded form gives it; undefined
 * for any other (the caller expands and parses it). `version`: the short form's.
 */
export function typedSummary(
  runId: string,
  value: unknown,
  version: number,
): RunSummary | undefined {
  if (!isName(runId) || !isPlainObject(value) || "runId" in value) return undefined;
  const { v, a, s, st, ph, it, u, c, t, pr, pc, rt } = value;
  if ((v !== undefined && v !== version) || value.pd !== undefined || value.e !== undefined) {
    return undefined;
  }
  if (!isName(a) || !isName(s) || typeof st !== "string" || !isRunRecordStatus(st))
    return undefined;
  const phase = ph === undefined ? USUAL_PHASE.get(st) : ph;
  if (typeof phase !== "string" || !(it === undefined || isCount(it))) return undefined;
  const usage = usageOf(u);
  if (usage === undefined || !isTime(c) || !isTime(t) || !isTime(c + t)) return undefined;
  if (!(pr === undefined || isName(pr)) || !(pc === undefined || isName(pc))) return undefined;
  if (!(rt === undefined || isName(rt))) return undefined;
  const summary: RunSummary = {
    runId,
    agent: a,
    sessionId: s,
    status: st,
    phase,
    pending: [],
    iterations: it ?? 0,
    usage,
    error: null,
    createdAt: c,
    updatedAt: c + t,
  };
  if (pr !== undefined) summary.parentRunId = pr;
  if (pc !== undefined) summary.parentToolCallId = pc;
  if (rt !== undefined) summary.rootRunId = rt;
  return summary;
}

/** A stored usage array (its trailing zeros left out), as `Usage`; undefined if unsure. */
function usageOf(stored: unknown): Usage | undefined {
  if (stored === undefined) {
    return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  }
  if (!Array.isArray(stored)) return undefined;
  const items: readonly unknown[] = stored;
  const counts = USAGE_FIELDS.map((_, at): unknown => (at < items.length ? items[at] : 0));
  if (!counts.every(isCount)) return undefined;
  const [inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens] = counts as number[];
  return {
    inputTokens: inputTokens as number,
    outputTokens: outputTokens as number,
    cacheReadTokens: cacheReadTokens as number,
    cacheWriteTokens: cacheWriteTokens as number,
  };
}

const CALL_STATUSES: ReadonlySet<unknown> = new Set([
  "invalid",
  "allowed",
  "denied",
  "asked",
  "approved",
  "rejected",
  "responded",
]);

/** The keys of a call state this decode takes; one with any other is left to zod. */
const CALL_STATE_KEYS: ReadonlySet<string> = new Set([
  "call",
  "status",
  "reason",
  "inputHash",
  "decidedBy",
  "interruptions",
]);

/**
 * A call state without a result, a response or approvals (`CallStateView`), as its parse gives
 * it (the call's input not copied: the caller copies what it hands out); undefined if unsure.
 */
export function typedCallState(value: unknown): CallState | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const key in value) if (!CALL_STATE_KEYS.has(key)) return undefined;
  const { call, status, reason, inputHash, decidedBy, interruptions } = value;
  if (!isPlainObject(call) || !CALL_STATUSES.has(status) || typeof reason !== "string") {
    return undefined;
  }
  const { id, name, input } = call;
  if (!isName(id) || !isName(name) || !isPlainObject(input) || Object.hasOwn(input, "__proto__")) {
    return undefined;
  }
  if (!(inputHash === undefined || typeof inputHash === "string")) return undefined;
  if (!(decidedBy === undefined || typeof decidedBy === "string")) return undefined;
  if (!(interruptions === undefined || (isCount(interruptions) && interruptions > 0))) {
    return undefined;
  }
  const state: CallState = {
    call: { id, name, input },
    status: status as CallState["status"],
    reason,
  };
  if (inputHash !== undefined) state.inputHash = inputHash;
  if (decidedBy !== undefined) state.decidedBy = decidedBy;
  if (interruptions !== undefined) state.interruptions = interruptions;
  return state;
}

const ROLES: ReadonlySet<unknown> = new Set(["user", "assistant", "tool"]);

/** True for a plain object with no `__proto__` key of its own at any depth. */
function isPlainJson(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (!isPlainObject(value) || Object.hasOwn(value, "__proto__")) return false;
  for (const key in value) if (!isPlainJson(value[key])) return false;
  return true;
}

/** True when `value`'s own keys are `keys` (optional ones may be absent), in that order. */
function hasKeysInOrder(value: Record<string, unknown>, keys: readonly string[], required: number) {
  let at = 0;
  let count = 0;
  for (const key in value) {
    while (at < keys.length && keys[at] !== key) {
      if (at < required) return false;
      at++;
    }
    if (at === keys.length) return false;
    at++;
    count++;
  }
  return count >= required;
}

/** One content block as `ContentBlock`'s parse gives it back unchanged. */
function isBlock(block: unknown): boolean {
  if (!isPlainObject(block)) return false;
  switch (block.type) {
    case "text":
      return hasKeysInOrder(block, ["type", "text"], 2) && typeof block.text === "string";
    case "thinking":
      return (
        hasKeysInOrder(block, ["type", "text", "providerData"], 2) &&
        typeof block.text === "string" &&
        (block.providerData === undefined
          ? !("providerData" in block)
          : isPlainJson(block.providerData))
      );
    case "tool_use":
      return (
        hasKeysInOrder(block, ["type", "id", "name", "input"], 4) &&
        isName(block.id) &&
        isName(block.name) &&
        isPlainObject(block.input) &&
        !Object.hasOwn(block.input, "__proto__")
      );
    case "tool_result":
      return (
        hasKeysInOrder(block, ["type", "toolCallId", "content", "isError"], 4) &&
        isName(block.toolCallId) &&
        typeof block.content === "string" &&
        typeof block.isError === "boolean"
      );
    default:
      return false;
  }
}

/**
 * True for messages `Message`'s parse gives back as they are (each with its role and content,
 * in that order, and blocks of their type's keys in order): such messages need no copy.
 */
export function isPlainConversation(messages: unknown): messages is unknown[] {
  if (!Array.isArray(messages)) return false;
  for (const message of messages) {
    if (!isPlainObject(message) || !hasKeysInOrder(message, ["role", "content"], 2)) return false;
    if (!ROLES.has(message.role) || !Array.isArray(message.content)) return false;
    if (!message.content.every(isBlock)) return false;
  }
  return true;
}

/** A plain object of strings (a record's `trace`). */
const isStringRecord = (value: unknown): boolean =>
  isPlainObject(value) &&
  !Object.hasOwn(value, "__proto__") &&
  Object.values(value).every((item) => typeof item === "string");

/** A record's `secretInputs`: paths of property names by tool name. */
const isSecretInputs = (value: unknown): boolean =>
  isPlainObject(value) &&
  !Object.hasOwn(value, "__proto__") &&
  Object.values(value).every(
    (paths) =>
      Array.isArray(paths) &&
      paths.every((path) => Array.isArray(path) && path.every((name) => typeof name === "string")),
  );

/** The persisted snapshot's keys `PersistedSnapshot` names first (the rest follow as they are). */
function isPlainSnapshot(snapshot: unknown): snapshot is Record<string, unknown> {
  if (!isPlainObject(snapshot) || Object.hasOwn(snapshot, "__proto__")) return false;
  let at = 0;
  for (const key in snapshot) {
    if (at < 3 && key !== ["status", "value", "context"][at]) return false;
    if (++at === 3) break;
  }
  const { status, value, context } = snapshot;
  return (
    at === 3 &&
    typeof status === "string" &&
    typeof value === "string" &&
    isPlainObject(context) &&
    !Object.hasOwn(context, "__proto__") &&
    // A record whose context still holds the conversation is moved apart first (codec.ts).
    !Array.isArray(context.messages)
  );
}

const optionalName = (value: unknown) => value === undefined || isName(value);

/**
 * A current-version record with no result yet (the record a step leases), as `RunRecord`'s
 * parse gives it; undefined for any other. Its conversation and snapshot are not copied:
 * `isPlainConversation` and `isPlainSnapshot` take only what the parse gives back unchanged.
 */
export function typedRecord(value: unknown, version: number): Record<string, unknown> | undefined {
  if (!isPlainObject(value) || value.schemaVersion !== version || value.result !== null) {
    return undefined;
  }
  const { runId, sessionId, agent, status, phase, input, snapshot, messages } = value;
  if (!isName(runId) || !isName(sessionId) || !isName(agent) || typeof phase !== "string") {
    return undefined;
  }
  if (typeof status !== "string" || !isRunRecordStatus(status)) return undefined;
  if (!isTime(value.createdAt) || !isTime(value.updatedAt)) return undefined;
  if (!isPlainObject(input) || !hasKeysInOrder(input, ["messages", "text", "maxIterations"], 1)) {
    return undefined;
  }
  const { messages: given, text, maxIterations } = input;
  if (!isPlainConversation(given) || given.length === 0) return undefined;
  if (!(text === undefined || typeof text === "string")) return undefined;
  if (!(isCount(maxIterations) && maxIterations > 0)) return undefined;
  if (!(snapshot === null || isPlainSnapshot(snapshot))) return undefined;
  if (!(messages === undefined ? snapshot === null : isPlainConversation(messages))) {
    return undefined;
  }
  const { trace, priority, secretInputs, parentRunId, parentToolCallId, rootRunId } = value;
  if (!(trace === undefined || isStringRecord(trace))) return undefined;
  if (!(priority === undefined || (isCount(priority) && priority > 0))) return undefined;
  if (!(secretInputs === undefined || isSecretInputs(secretInputs))) return undefined;
  if (!optionalName(parentRunId) || !optionalName(parentToolCallId)) return undefined;
  if (!optionalName(rootRunId)) return undefined;
  const record: Record<string, unknown> = {
    schemaVersion: version,
    runId,
    sessionId,
    agent,
    status,
    phase,
    input:
      text === undefined
        ? { messages: given, maxIterations }
        : { messages: given, text, maxIterations },
    snapshot,
  };
  if (messages !== undefined) record.messages = messages;
  record.result = null;
  record.createdAt = value.createdAt;
  record.updatedAt = value.updatedAt;
  for (const [key, item] of [
    ["trace", trace],
    ["priority", priority],
    ["secretInputs", secretInputs],
    ["parentRunId", parentRunId],
    ["parentToolCallId", parentToolCallId],
    ["rootRunId", rootRunId],
  ] as const) {
    if (item !== undefined) record[key] = item;
  }
  return record;
}
