import { messageOf } from "../../core/errors.js";
import {
  type PendingApproval,
  type RunError,
  USAGE_FIELDS,
  type Usage,
} from "../../core/values.js";
import { describeIssues } from "../../tools/validate.js";
import { StoreVersionError } from "../errors.js";
import { RunSummary } from "../summary.js";
import { corrupt } from "./codec.js";
import { typedSummary, USUAL_PHASE } from "./typed-decode.js";

// A run's summary as a backend stores it beside the record (Redis keeps one per run, parked
// runs by the thousand): short keys, and nothing the reader has in hand or can derive again.
// The run id is the key's (the reader always knows it); `phase` is left out when it is the one
// its status usually has (`USUAL_PHASE`), `error` when null, `pending` when empty (each call a
// [toolCallId, name, input, reason] tuple), `iterations` when 0; `usage` is an array without
// its trailing zeros, and `updatedAt` the time since `createdAt`. A child run's link (§14) is
// kept only on a child: optional keys, so version 2 reads summaries with or without them.
//
// Versions: 1 is the full form (a `RunSummary` as it is, with its `runId`), as record version 3
// stored it; 2 is the short form above, stored without a version at first, then with `v: 2`.
// Both still read; a summary of a later version is refused with `StoreVersionError`.

/** The version of the summaries this one writes. */
export const SUMMARY_VERSION = 2;

/** The stored summary's fields. */
interface StoredSummary {
  /** The summary's version (`SUMMARY_VERSION`); absent in the short form's first summaries. */
  v?: number;
  /** agent */
  a: string;
  /** sessionId */
  s: string;
  /** status */
  st: string;
  /** phase, when not the status's usual one */
  ph?: string;
  /** pending, when any: [toolCallId, name, input, reason] each */
  pd?: PendingTuple[];
  /** iterations, when not 0 */
  it?: number;
  /** usage: input, output, cache read, cache write tokens, without trailing zeros */
  u?: number[];
  /** error, when not null */
  e?: RunError;
  /** createdAt */
  c: number;
  /** updatedAt − createdAt */
  t: number;
  /** A child's parentRunId, parentToolCallId and rootRunId */
  pr?: string;
  pc?: string;
  rt?: string;
}

type PendingTuple =
  | [string, string, PendingApproval["input"], string]
  | [string, string, PendingApproval["input"], string, PendingApproval["approvals"]];

/**
 * A pending call as its stored tuple: its fields in `PENDING_FIELDS` order, the last
 * (`approvals`, a quorum call's) left out when absent.
 */
const PENDING_FIELDS = [
  "toolCallId",
  "name",
  "input",
  "reason",
  "approvals",
] as const satisfies readonly (keyof PendingApproval)[];

// Every field of a pending call is in the tuple: a field added to PendingApproval fails here.
type MissingFromTuple = Exclude<keyof PendingApproval, (typeof PENDING_FIELDS)[number]>;
const tupleHoldsEveryField: [MissingFromTuple] extends [never] ? true : false = true;
void tupleHoldsEveryField;

/** The stored JSON of a summary (its run id left out). */
export function encodeSummary(summary: RunSummary): string {
  const stored: StoredSummary = {
    v: SUMMARY_VERSION,
    a: summary.agent,
    s: summary.sessionId,
    st: summary.status,
    c: summary.createdAt,
    t: summary.updatedAt - summary.createdAt,
  };
  if (summary.phase !== USUAL_PHASE.get(summary.status)) stored.ph = summary.phase;
  if (summary.pending.length > 0) {
    stored.pd = summary.pending.map((call) =>
      call.approvals === undefined
        ? [call.toolCallId, call.name, call.input, call.reason]
        : [call.toolCallId, call.name, call.input, call.reason, call.approvals],
    );
  }
  if (summary.iterations !== 0) stored.it = summary.iterations;
  const usage = USAGE_FIELDS.map((field) => summary.usage[field]);
  while (usage.length > 0 && usage.at(-1) === 0) usage.pop();
  if (usage.length > 0) stored.u = usage;
  if (summary.error !== null) stored.e = summary.error;
  if (summary.parentRunId !== undefined) stored.pr = summary.parentRunId;
  if (summary.parentToolCallId !== undefined) stored.pc = summary.parentToolCallId;
  if (summary.rootRunId !== undefined) stored.rt = summary.rootRunId;
  return JSON.stringify(stored);
}

/** `RunSummary.safeParse` (the usual summary is decoded without it: `typedSummary`). */
const parseSummary = (value: unknown) => RunSummary.safeParse(value);

/** The summary a stored one stands for, unchecked (the caller parses it as `RunSummary`). */
export function expandSummary(runId: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || "runId" in value) return value;
  const stored = value as Partial<StoredSummary>;
  if (stored.v !== undefined && stored.v !== SUMMARY_VERSION) {
    throw new StoreVersionError(runId, stored.v, SUMMARY_VERSION, "summary");
  }
  const usage = Object.fromEntries(
    USAGE_FIELDS.map((field, at) => [field, Array.isArray(stored.u) ? (stored.u[at] ?? 0) : 0]),
  ) as unknown as Usage;
  return {
    runId,
    agent: stored.a,
    sessionId: stored.s,
    status: stored.st,
    phase: stored.ph ?? USUAL_PHASE.get(stored.st),
    pending: Array.isArray(stored.pd) ? stored.pd.map(pendingOf) : [],
    iterations: stored.it ?? 0,
    usage: stored.u === undefined || Array.isArray(stored.u) ? usage : stored.u,
    error: stored.e ?? null,
    createdAt: stored.c,
    updatedAt:
      typeof stored.c === "number" && typeof stored.t === "number" ? stored.c + stored.t : stored.t,
    ...(stored.pr === undefined ? {} : { parentRunId: stored.pr }),
    ...(stored.pc === undefined ? {} : { parentToolCallId: stored.pc }),
    ...(stored.rt === undefined ? {} : { rootRunId: stored.rt }),
  };
}

/** The pending call a stored tuple stands for (anything else is left for the schema to refuse). */
function pendingOf(tuple: unknown): unknown {
  if (
    !Array.isArray(tuple) ||
    (tuple.length !== PENDING_FIELDS.length && tuple.length !== PENDING_FIELDS.length - 1)
  ) {
    return tuple;
  }
  return Object.fromEntries(tuple.map((value, at) => [PENDING_FIELDS[at], value]));
}

/**
 * Reads run `runId`'s stored summary (either form); throws a `record_corrupt` BackendError
 * naming `what` when it is not one.
 */
export function decodeSummary(
  runId: string,
  json: string,
  what = `The summary of run "${runId}"`,
): RunSummary {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw corrupt(what, `not valid JSON (${messageOf(error)})`);
  }
  const typed = typedSummary(runId, value, SUMMARY_VERSION);
  if (typed !== undefined) return typed;
  const parsed = parseSummary(expandSummary(runId, value));
  if (!parsed.success) throw corrupt(what, describeIssues(parsed.error.issues));
  return parsed.data;
}

/** `decodeSummary`, or undefined for a stored summary that is not one. */
export function readSummary(runId: string, json: string): RunSummary | undefined {
  try {
    return decodeSummary(runId, json);
  } catch {
    return undefined;
  }
}

/**
 * The summary a run-change announcement carries (`[<run id's JSON>,<stored summary>]`, as the
 * Redis scripts publish it: `announceLua`), or undefined for a message that is not one.
 */
export function readAnnouncement(message: string): RunSummary | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== "string") return undefined;
  const typed = typedSummary(value[0], value[1], SUMMARY_VERSION);
  if (typed !== undefined) return typed;
  try {
    const parsed = parseSummary(expandSummary(value[0], value[1]));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
