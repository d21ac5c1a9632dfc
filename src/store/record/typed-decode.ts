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
  const counts = USAGE_FIELDS.map((_, at) => (at < stored.length ? stored[at] : 0));
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
