import { messageOf } from "../../core/errors.js";
import { USAGE_FIELDS } from "../../core/values.js";
import { describeIssues } from "../../tools/validate.js";
import { StoredCheckpoint } from "../checkpoint.js";
import { corrupt } from "./codec.js";

// A checkpoint as a backend stores it (one per save, kept as long as the run, parked runs by
// the thousand): short keys, and nothing that holds its usual value. `s` (status) is left out
// when "running", `i` (iteration) when 0; a model call is a tuple [model, durationMs,
// stopReason, input, output, cache read, cache write tokens] without its trailing zero tokens.
// A checkpoint stored in the full form reads as it is.

/** The stored checkpoint's fields. */
interface Compact {
  /** at */
  t: number;
  /** phase */
  p: string;
  /** status, when not "running" */
  s?: string;
  /** iteration, when not 0 */
  i?: number;
  /** model call: [model, durationMs, stopReason, ...tokens without trailing zeros] */
  m?: [string, number, string, ...number[]];
  /** raw outcomes by call id (null: as processed) */
  r?: StoredCheckpoint["raw"];
}

/** The stored JSON of a checkpoint. */
export function encodeCheckpoint(checkpoint: StoredCheckpoint): string {
  const stored: Compact = { t: checkpoint.at, p: checkpoint.phase };
  if (checkpoint.status !== "running") stored.s = checkpoint.status;
  if (checkpoint.iteration !== 0) stored.i = checkpoint.iteration;
  const { model, raw } = checkpoint;
  if (model !== undefined) {
    const tokens = USAGE_FIELDS.map((field) => model.usage[field]);
    while (tokens.length > 0 && tokens.at(-1) === 0) tokens.pop();
    stored.m = [model.model, model.durationMs, model.stopReason, ...tokens];
  }
  if (raw !== undefined) stored.r = raw;
  return JSON.stringify(stored);
}

/** A stored checkpoint (short or full form); throws a `record_corrupt` BackendError naming `what`. */
export function decodeCheckpoint(json: string, what: string): StoredCheckpoint {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw corrupt(what, `not valid JSON (${messageOf(error)})`);
  }
  const parsed = StoredCheckpoint.safeParse(expand(value));
  if (!parsed.success) throw corrupt(what, describeIssues(parsed.error.issues));
  return parsed.data;
}

/** The full form a short one stands for, unchecked (the caller parses it). */
function expand(value: unknown): unknown {
  if (typeof value !== "object" || value === null || !("t" in value)) return value;
  const stored = value as Partial<Compact>;
  const full: Record<string, unknown> = {
    at: stored.t,
    phase: stored.p,
    status: stored.s ?? "running",
    iteration: stored.i ?? 0,
  };
  if (Array.isArray(stored.m)) {
    const [model, durationMs, stopReason, ...tokens] = stored.m;
    full.model = {
      model,
      durationMs,
      stopReason,
      usage: Object.fromEntries(USAGE_FIELDS.map((field, at) => [field, tokens[at] ?? 0])),
    };
  }
  if (stored.r !== undefined) full.raw = stored.r;
  return full;
}
