import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fastParser, fastThrowingParser, UNSURE } from "../../../src/store/fast-parse.js";
import { joinRecord } from "../../../src/store/record/decode.js";
import { decodeSummary } from "../../../src/store/record/summary-codec.js";
import { PersistedSnapshot, RunRecord, SnapshotContextView } from "../../../src/store/schemas.js";
import { RunSummary } from "../../../src/store/summary.js";

// The fast parser stands in for a zod parse only when it returns what that parse returns: these
// tests hold it to that on the stored fixtures and on every small change of them.

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../fixtures/run-records/${name}`, import.meta.url), "utf8"),
  ) as { document: string; messages: string[]; summary?: string };

const completed = fixture("v4-completed.stored.json");
const parked = fixture("v4-parked.stored.json");
const parkedSummary = decodeSummary("id-2", parked.summary as string);
/** As JSON data (what a load parses): the fixtures' records and summary. */
const asData = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
const records = [
  asData(joinRecord(completed.document, completed.messages)),
  asData(joinRecord(parked.document, parked.messages, parkedSummary)),
];
const summary = asData(parkedSummary);

type Json = unknown;

/** Every value a small change of `value` gives: at each place, each of a few edits. */
function* variants(value: Json): Generator<Json> {
  const edits: Json[] = [null, "", "x", 0, -1, 1.5, 2 ** 60, true, {}, [], [{}]];
  function* at(node: Json, rebuild: (replacement: Json) => Json): Generator<Json> {
    for (const edit of edits) yield rebuild(edit);
    if (Array.isArray(node)) {
      yield rebuild([]);
      yield rebuild([...node, ...node]);
      for (let index = 0; index < node.length; index++) {
        yield* at(node[index], (replacement) =>
          rebuild(node.map((item: Json, each) => (each === index ? replacement : item))),
        );
      }
    } else if (typeof node === "object" && node !== null) {
      const entries = Object.entries(node);
      yield rebuild({ ...node, extra: 1 });
      const rest = JSON.stringify(node).slice(1);
      yield rebuild(JSON.parse(`{"__proto__":{"x":1}${rest === "}" ? "" : ","}${rest}`));
      yield rebuild(Object.assign(Object.create(null), node));
      yield rebuild(Object.fromEntries([...entries].reverse()));
      for (const [key, item] of entries) {
        const { [key]: _dropped, ...rest } = node as Record<string, Json>;
        yield rebuild(rest);
        yield rebuild({ ...rest, [key]: item }); // moved last
        yield rebuild({ ...node, [key]: undefined });
        yield* at(item, (replacement) => rebuild({ ...node, [key]: replacement }));
      }
    }
  }
  yield value;
  yield* at(value, (replacement) => replacement);
}

/** The fast parser never accepts what zod refuses, and returns what zod returns. */
function agreesWithZod(schema: z.ZodType, value: Json, anyOrder = false): boolean {
  const fast = fastParser(schema, { anyOrder })(value);
  if (fast === UNSURE) return true;
  const parsed = schema.safeParse(value);
  if (!parsed.success) return false;
  if (!isDeepStrictEqual(fast, parsed.data)) return false;
  return anyOrder || JSON.stringify(fast) === JSON.stringify(parsed.data);
}

describe("fastParser", () => {
  it("returns the fixtures' records and summary themselves, as zod parses them", () => {
    for (const record of records) {
      expect(fastParser(RunRecord)(record)).toBe(record);
      expect(RunRecord.parse(record)).toEqual(record);
    }
    expect(fastParser(RunSummary)(summary)).toBe(summary);
  });

  it("agrees with zod on every small change of a stored record", () => {
    let checked = 0;
    let fast = 0;
    for (const record of records) {
      for (const variant of variants(record)) {
        checked++;
        if (fastParser(RunRecord)(variant) !== UNSURE) fast++;
        if (!agreesWithZod(RunRecord, variant)) {
          throw new Error(`disagrees with zod on ${JSON.stringify(variant)}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(3_000);
    expect(fast).toBeGreaterThan(100);
  });

  it("agrees with zod on every small change of a summary", () => {
    for (const variant of variants(summary)) {
      if (!agreesWithZod(RunSummary, variant)) {
        throw new Error(`disagrees with zod on ${JSON.stringify(variant)}`);
      }
    }
  });

  it("agrees with zod on a machine context's view, in any key order, and freezes its calls", () => {
    const record = records[1] as { snapshot: { context: Record<string, unknown> } };
    const context = record.snapshot.context;
    for (const variant of variants(context)) {
      if (!agreesWithZod(SnapshotContextView, variant, true)) {
        throw new Error(`disagrees with zod on ${JSON.stringify(variant)}`);
      }
    }
    const view = fastParser(SnapshotContextView, { anyOrder: true })(context);
    expect(view).not.toBe(UNSURE);
    const calls = (view as SnapshotContextView).calls;
    expect(Object.isFrozen(calls[0]?.call)).toBe(true);
    // The caller's value is never frozen: the view holds a frozen copy.
    expect(Object.isFrozen((context.calls as Array<{ call: object }>)[0]?.call)).toBe(false);
    for (const variant of variants(record.snapshot)) {
      if (!agreesWithZod(PersistedSnapshot, variant)) {
        throw new Error(`disagrees with zod on ${JSON.stringify(variant)}`);
      }
    }
  });

  it("reorders keys as zod does, and leaves keys zod would strip to zod", () => {
    const record = records[0] as Record<string, unknown>;
    const reversed = Object.fromEntries(Object.entries(record).reverse());
    const parsed = fastParser(RunRecord)(reversed);
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(RunRecord.parse(reversed)));
    expect(fastParser(RunRecord)({ ...record, extra: 1 })).toBe(UNSURE);
  });

  // Shaped like the Redis scripts' replies the runtime reads on every step.
  const Reply = z.union([
    z.literal(-1),
    z.literal(-2),
    z.tuple([z.literal(0), z.number()]),
    z.tuple([z.literal(1), z.number(), z.string(), z.array(z.string())]),
    z.tuple([z.union([z.number(), z.string()]), z.string().min(1)]),
  ]);
  const replies = [
    -1,
    -2,
    [0, 12],
    [1, 3, "doc", ["a", "b"]],
    [1, 3, "", []],
    ["x", "y"],
    [7, "y"],
  ];

  it("takes tuples and unions of distinct kinds itself, as zod parses them", () => {
    for (const reply of replies) expect(fastParser(Reply)(reply)).toBe(reply);
    expect(fastParser(Reply)([1, 3, "doc", ["a", 2]])).toBe(UNSURE);
    expect(fastParser(Reply)([0, 12, 13])).toBe(UNSURE);
    expect(fastParser(Reply)(3)).toBe(UNSURE);
  });

  it("agrees with zod on every small change of a reply", () => {
    for (const reply of replies) {
      for (const variant of variants(reply)) expect(agreesWithZod(Reply, variant)).toBe(true);
    }
  });

  it("leaves a union option it cannot rule out to zod, and tuples with optional items", () => {
    // An object option comes first: zod may take it for any value, so the fast path never decides.
    const ObjectFirst = z.union([z.object({ a: z.number() }).or(z.array(z.number())), z.number()]);
    expect(fastParser(ObjectFirst)(1)).toBe(UNSURE);
    const Optional = z.tuple([z.number(), z.string().optional()]);
    expect(fastParser(Optional)([1])).toBe(UNSURE);
    expect(fastParser(Optional)([1, "a"])).toBe(UNSURE);
  });

  it("throws zod's error, as parse does, for a value zod refuses", () => {
    const parse = fastThrowingParser(Reply);
    expect(parse([0, 12])).toEqual([0, 12]);
    expect(() => parse([0, ""])).toThrow(z.ZodError);
  });
});
