import { z } from "zod";
import { recordById } from "../../core/id-record.js";
import { lazySchema } from "../../core/lazy-schema.js";
import { ToolResult } from "../../core/values.js";
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

/** `schema.parse`, as a function of the reply; the schema is built on the first reply. */
const parserOf = <T>(build: () => z.ZodType<T>) => {
  const schema = lazySchema(build);
  return (value: unknown): T => schema.parse(value);
};

/** ACQUIRE_LEASE's reply: refused (0, ms left), or taken with the run as it stood. */
export const parseLeaseReply = parserOf(() =>
  z.union([
    z.tuple([z.literal(0), z.number()]),
    z.tuple([
      z.literal(1),
      z.number(),
      z.number(),
      z.string(),
      z.array(z.string()),
      z.array(z.string()),
      z.string(),
    ]),
  ]),
);

/** OPEN_TOOL_CALL's reply: document, summary ("" when none), committed, cancelled. */
export const parseOpenToolCallReply = parserOf(() =>
  z.tuple([z.string(), z.string(), z.number(), z.number(), z.union([z.number(), z.string()])]),
);

/** SAVE_RUN's reply: refused (-1: lease lost, -2: conversation length), or saved. */
export const parseSaveReply = parserOf(() =>
  z.union([
    z.literal(-1),
    z.literal(-2),
    z.tuple([z.literal(1), z.number(), z.number(), z.array(z.string())]),
  ]),
);

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
