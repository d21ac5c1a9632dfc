import { recordById } from "../../core/id-record.js";
import { ToolResult } from "../../core/values.js";
import { BackendError } from "../../store/errors.js";
import { decodeStored } from "../../store/record/codec.js";
import { decodeSummary } from "../../store/record/summary-codec.js";
import type { RunSummary } from "../../store/summary.js";
import { callKeyOfField } from "../redis-keys.js";

/**
 * In-flight marks of a call attempt: its handler started (`started:<unique id>`), or it did
 * not run and waits for a person (`interrupted:<reason>`).
 */
export const STARTED = "started";
export const INTERRUPTED = "interrupted:";

// The replies of the runtime's own scripts are checked by shape, by hand: a zod union of
// tuples allocated about 10 KB per lease reply (every option tried, issues built for the ones
// that fail), a tenth of what a worker allocated per run outside its saves.

type Check<T> = (value: unknown) => value is T;
const isNumber: Check<number> = (value): value is number =>
  typeof value === "number" && Number.isFinite(value);
const isString: Check<string> = (value): value is string => typeof value === "string";
const isStrings: Check<string[]> = (value): value is string[] =>
  Array.isArray(value) && value.every(isString);
const is =
  <T extends number>(literal: T): Check<T> =>
  (value): value is T =>
    value === literal;

/** True when `value` is an array of exactly `checks.length` items, each passing its check. */
function isTuple<T extends readonly unknown[]>(
  value: unknown,
  checks: { readonly [K in keyof T]: Check<T[K]> },
): value is T {
  return (
    Array.isArray(value) &&
    value.length === checks.length &&
    checks.every((check, at) => check(value[at]))
  );
}

/** A reply of one of the runtime's scripts that is none of the shapes it sends. */
const malformed = (script: string, value: unknown) =>
  new BackendError(
    `Redis answered ${script} with an unexpected reply: ${JSON.stringify(value)?.slice(0, 200)}.`,
  );

/** ACQUIRE_LEASE's reply, taken: the token, cancelled, document, raw results, messages, summary. */
type LeaseTaken = [1, number, number, string, string[], string[], string];

/** ACQUIRE_LEASE's reply: refused (0, ms left), or taken with the run as it stood. */
export function parseLeaseReply(value: unknown): [0, number] | LeaseTaken {
  if (
    isTuple<LeaseTaken>(value, [
      is(1),
      isNumber,
      isNumber,
      isString,
      isStrings,
      isStrings,
      isString,
    ])
  )
    return value;
  if (isTuple<[0, number]>(value, [is(0), isNumber])) return value;
  throw malformed("ACQUIRE_LEASE", value);
}

/**
 * OPEN_TOOL_CALL's reply: document, summary ("" when none), committed, cancelled, started, the
 * conversation's length and its last message ("" when none).
 */
export function parseOpenToolCallReply(
  value: unknown,
): [string, string, number, number, number | string, number, string] {
  const started = (item: unknown): item is number | string => isNumber(item) || isString(item);
  if (
    isTuple<[string, string, number, number, number | string, number, string]>(value, [
      isString,
      isString,
      isNumber,
      isNumber,
      started,
      isNumber,
      isString,
    ])
  )
    return value;
  throw malformed("OPEN_TOOL_CALL", value);
}

/** SAVE_RUN's reply: refused (-1: lease lost, -2: conversation length), or saved. */
export function parseSaveReply(
  value: unknown,
): -1 | -2 | [1, number, number, string[]] | [1, number, number, string[], string] {
  if (isTuple<[1, number, number, string[]]>(value, [is(1), isNumber, isNumber, isStrings]))
    return value;
  // A finished run's save: its tree link too ("" for a root).
  if (
    isTuple<[1, number, number, string[], string]>(value, [
      is(1),
      isNumber,
      isNumber,
      isStrings,
      isString,
    ])
  )
    return value;
  if (value === -1 || value === -2) return value;
  throw malformed("SAVE_RUN", value);
}

/** Run `runId`'s stored summary (JSON; "" or null when it has none), parsed. */
export function storedSummary(
  runId: string,
  json: string | null | undefined,
): RunSummary | undefined {
  if (json == null || json === "") return undefined;
  return decodeSummary(runId, json, "A stored run summary");
}

/** Raw results as a flat field/value list from Redis, by call key. */
export function rawResultsOf(runId: string, flat: readonly string[]): Record<string, ToolResult> {
  const entries: Array<[string, ToolResult]> = [];
  for (let index = 0; index + 1 < flat.length; index += 2) {
    entries.push([
      callKeyOfField(flat[index] as string),
      decodeStored(ToolResult, flat[index + 1] as string, `A raw result of run "${runId}"`),
    ]);
  }
  return recordById(entries);
}
