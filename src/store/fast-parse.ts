import type { z } from "zod";

// A cheaper `safeParse` for the stored data read on every load and save (records, summaries,
// machine contexts), built from the zod schema itself so that the schema stays the one
// definition of the shape. `fastParser(schema)(value)` returns what `schema.parse(value)` would
// return — the value itself when parsing it would copy it unchanged, a copy with its keys in the
// schema's order when only their order differs — or `UNSURE` whenever it cannot be sure of
// that: a value that does not parse, a key the schema would strip, a `__proto__` key, a value
// that is not a plain object or array, any schema or check it does not know. The caller then
// runs the zod parse, which gives the data or the error: the fast path never accepts what zod
// refuses, and never returns other data than zod would (test/unit/store/fast-parse.test.ts
// checks both against the schemas, value by value).
//
// What it does not do is what costs in zod on these values: a fresh object per object and array
// parsed, a payload and issue list per value.

/** Returned when the value must be left to the zod parse. */
export const UNSURE: unique symbol = Symbol("unsure");
type Unsure = typeof UNSURE;

type Parse = (value: unknown) => unknown;

/** The internals of a zod 4 schema that the parser reads. */
interface Internals {
  _zod: {
    def: {
      type: string;
      checks?: ReadonlyArray<{ _zod: { def: CheckDef } }>;
      shape?: Record<string, Schema>;
      catchall?: Schema;
      element?: Schema;
      innerType?: Schema;
      options?: readonly Schema[];
      keyType?: Schema;
      valueType?: Schema;
      values?: readonly unknown[];
      items?: readonly Schema[];
      rest?: Schema | null;
      discriminator?: string;
      entries?: Record<string, unknown>;
    };
    optin?: string;
    optout?: string;
  };
}
type Schema = z.ZodType | Internals;
interface CheckDef {
  check: string;
  minimum?: number;
  value?: number;
  inclusive?: boolean;
  format?: string;
}

const internals = (schema: Schema): Internals["_zod"] => (schema as Internals)._zod;

const refuse: Parse = () => UNSURE;

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  Object.getPrototypeOf(value) === Object.prototype &&
  !Array.isArray(value);

/**
 * The checks of a string, number or array schema as one predicate on the value (its length for
 * strings and arrays), or undefined when one of them is not known here.
 */
function checksOf(
  checks: ReadonlyArray<{ _zod: { def: CheckDef } }> | undefined,
  measure: "length" | "number",
): ((value: number) => boolean) | undefined {
  const tests: Array<(value: number) => boolean> = [];
  for (const { _zod } of checks ?? []) {
    const check = _zod.def;
    if (check.check === "min_length" && measure === "length" && check.minimum !== undefined) {
      const minimum = check.minimum;
      tests.push((length) => length >= minimum);
    } else if (
      check.check === "greater_than" &&
      measure === "number" &&
      check.value !== undefined
    ) {
      const bound = check.value;
      tests.push(check.inclusive === true ? (n) => n >= bound : (n) => n > bound);
    } else if (
      check.check === "number_format" &&
      measure === "number" &&
      check.format === "safeint"
    ) {
      tests.push(Number.isSafeInteger);
    } else return undefined;
  }
  return (value) => {
    for (const test of tests) if (!test(value)) return false;
    return true;
  };
}

const parsers = new WeakMap<object, Parse>();

/**
 * `schema`'s fast parser (see above). With `anyOrder`, for a value that is only read and never
 * stored or sent (a view of a machine context): an object schema's value is returned as it is
 * when its keys are in another order than zod's output would have them (in the nested values,
 * the order still counts).
 */
export function fastParser<T>(
  schema: z.ZodType<T>,
  options: { anyOrder?: boolean } = {},
): (value: unknown) => T | Unsure {
  const { def } = internals(schema);
  const parse =
    options.anyOrder === true && def.type === "object" ? objectParser(def, true) : parserOf(schema);
  return parse as (value: unknown) => T | Unsure;
}

/**
 * `schema.safeParse` with `fastParser` in front: zod parses only what the fast path is not sure
 * of, and so gives every error.
 */
export function fastSafeParser<T>(
  schema: z.ZodType<T>,
  options: { anyOrder?: boolean } = {},
): (value: unknown) => z.ZodSafeParseResult<T> {
  const fast = fastParser(schema, options);
  return (value) => {
    const parsed = fast(value);
    return parsed === UNSURE ? schema.safeParse(value) : { success: true, data: parsed };
  };
}

/** `schema.parse` with `fastParser` in front: zod parses (and throws) only where unsure. */
export function fastThrowingParser<T>(schema: z.ZodType<T>): (value: unknown) => T {
  const fast = fastParser(schema);
  return (value) => {
    const parsed = fast(value);
    return parsed === UNSURE ? schema.parse(value) : parsed;
  };
}

function parserOf(schema: Schema): Parse {
  const known = parsers.get(schema);
  if (known !== undefined) return known;
  // A recursive schema would come back here while being built: it is left to zod.
  parsers.set(schema, refuse);
  const parse = build(schema);
  parsers.set(schema, parse);
  return parse;
}

function build(schema: Schema): Parse {
  const { def } = internals(schema);
  switch (def.type) {
    case "string": {
      const checks = checksOf(def.checks, "length");
      if (checks === undefined) return refuse;
      return (value) => (typeof value === "string" && checks(value.length) ? value : UNSURE);
    }
    case "number": {
      const checks = checksOf(def.checks, "number");
      if (checks === undefined) return refuse;
      return (value) =>
        typeof value === "number" && Number.isFinite(value) && checks(value) ? value : UNSURE;
    }
    case "boolean":
      return def.checks?.length ? refuse : (value) => (typeof value === "boolean" ? value : UNSURE);
    case "unknown":
      return (value) => value;
    case "literal":
    case "enum": {
      const allowed = new Set(valuesOf(schema));
      return (value) => (allowed.has(value) ? value : UNSURE);
    }
    case "nullable": {
      const inner = parserOf(def.innerType as Schema);
      return (value) => (value === null ? null : inner(value));
    }
    case "optional": {
      const inner = parserOf(def.innerType as Schema);
      return (value) => (value === undefined ? UNSURE : inner(value));
    }
    case "union":
      return def.discriminator === undefined ? unionParser(def) : discriminatedParser(def);
    case "readonly": {
      // zod freezes the copy it parsed: so does this, never the caller's value.
      const inner = parserOf(def.innerType as Schema);
      return (value) => {
        const parsed = inner(value);
        if (parsed === UNSURE || typeof parsed !== "object" || parsed === null) return parsed;
        if (Object.isFrozen(parsed)) return parsed;
        return Object.freeze(Array.isArray(parsed) ? [...parsed] : { ...parsed });
      };
    }
    case "array":
      return arrayParser(def);
    case "tuple":
      return tupleParser(def);
    case "record":
      return recordParser(def);
    case "object":
      return objectParser(def);
    default:
      return refuse;
  }
}

/** The values a literal or enum schema allows, or undefined for any other schema. */
function valuesOf(schema: Schema | undefined): unknown[] | undefined {
  if (schema === undefined) return undefined;
  const { def } = internals(schema);
  if (def.type === "literal") return [...(def.values ?? [])];
  if (def.type === "enum") return Object.values(def.entries ?? {});
  return undefined;
}

/**
 * A union: the first option not ruled out for the value (`rulesOut`) decides, as zod takes
 * the first option that parses. When that option's fast parser is unsure, so is the union:
 * zod may still take it, or a later option.
 */
function unionParser(def: Internals["_zod"]["def"]): Parse {
  const options = (def.options ?? []).map((option) => ({
    rulesOut: ruledOutBy(option),
    parse: parserOf(option),
  }));
  return (value) => {
    for (const { rulesOut, parse } of options) {
      if (!rulesOut(value)) return parse(value);
    }
    return UNSURE;
  };
}

/**
 * A test that is true only of values `schema` surely refuses, by their JavaScript type (or,
 * for a literal or an enum, by value; for a tuple, by its length and items); false when unsure.
 */
function ruledOutBy(schema: Schema): (value: unknown) => boolean {
  const { def } = internals(schema);
  const values = valuesOf(schema);
  if (values !== undefined) {
    const allowed = new Set(values);
    return (value) => !allowed.has(value);
  }
  switch (def.type) {
    case "string":
    case "number":
    case "boolean":
      return (value) => typeof value !== def.type;
    case "array":
      return (value) => !Array.isArray(value);
    case "tuple": {
      const items = def.items ?? [];
      // With rest or optional items, other lengths parse too: only the type rules out then.
      if (def.rest != null || items.some((item) => internals(item).optin !== undefined)) {
        return (value) => !Array.isArray(value);
      }
      const itemsRuleOut = items.map((item) => ruledOutBy(item));
      return (value) =>
        !Array.isArray(value) ||
        value.length !== items.length ||
        itemsRuleOut.some((rulesOut, at) => rulesOut((value as unknown[])[at]));
    }
    default:
      return () => false;
  }
}

/** A discriminated union: the one option its discriminator names, as zod picks it. */
function discriminatedParser(def: Internals["_zod"]["def"]): Parse {
  const discriminator = def.discriminator as string;
  const byValue = new Map<unknown, Parse>();
  for (const option of def.options ?? []) {
    const values = valuesOf(internals(option).def.shape?.[discriminator]);
    if (values === undefined) return refuse;
    for (const value of values) {
      if (byValue.has(value)) return refuse;
      byValue.set(value, parserOf(option));
    }
  }
  return (value) => {
    if (!isPlain(value)) return UNSURE;
    const option = byValue.get(value[discriminator]);
    return option === undefined ? UNSURE : option(value);
  };
}

function arrayParser(def: Internals["_zod"]["def"]): Parse {
  const checks = checksOf(def.checks, "length");
  if (checks === undefined || def.element === undefined) return refuse;
  const element = parserOf(def.element);
  return (value) => {
    if (!Array.isArray(value) || !checks(value.length)) return UNSURE;
    const items = value as unknown[];
    let copy: unknown[] | undefined;
    for (let at = 0; at < value.length; at++) {
      const item: unknown = items[at];
      // A hole or an undefined item: zod's output would differ in ways not worth following.
      if (item === undefined) return UNSURE;
      const parsed = element(item);
      if (parsed === UNSURE) return UNSURE;
      if (parsed !== item) {
        copy ??= items.slice(0, at);
        copy.push(parsed);
      } else copy?.push(item);
    }
    return copy ?? items;
  };
}

/** A tuple without rest items: exactly as many items as the schema has, each parsed. */
function tupleParser(def: Internals["_zod"]["def"]): Parse {
  if (def.checks?.length || def.rest != null || def.items === undefined) return refuse;
  // An optional item makes a shorter tuple valid, with its own output rules: left to zod.
  if (def.items.some((item) => internals(item).optin !== undefined)) return refuse;
  const items = def.items.map((item) => parserOf(item));
  return (value) => {
    if (!Array.isArray(value) || value.length !== items.length) return UNSURE;
    const given = value as unknown[];
    let copy: unknown[] | undefined;
    for (let at = 0; at < items.length; at++) {
      const item: unknown = given[at];
      if (item === undefined) return UNSURE;
      const parsed = (items[at] as Parse)(item);
      if (parsed === UNSURE) return UNSURE;
      if (parsed !== item) {
        copy ??= given.slice(0, at);
        copy.push(parsed);
      } else copy?.push(item);
    }
    return copy ?? given;
  };
}

function recordParser(def: Internals["_zod"]["def"]): Parse {
  const key = def.keyType === undefined ? undefined : internals(def.keyType).def;
  // Only string keys without checks: any key of a plain object parses as itself.
  if (key?.type !== "string" || key.checks?.length || def.valueType === undefined) return refuse;
  const parseItem = parserOf(def.valueType);
  return (value) => {
    if (!isPlain(value)) return UNSURE;
    let copy: Record<string, unknown> | undefined;
    for (const field in value) {
      if (field === "__proto__") return UNSURE;
      const item = value[field];
      if (item === undefined) return UNSURE;
      const parsed = parseItem(item);
      if (parsed === UNSURE) return UNSURE;
      if (parsed !== item && copy === undefined) copy = {};
      if (copy !== undefined) copy[field] = parsed;
    }
    if (copy === undefined) return value;
    // The fields before the first that changed, in their order.
    const result: Record<string, unknown> = {};
    for (const field in value) result[field] = field in copy ? copy[field] : value[field];
    return result;
  };
}

function objectParser(def: Internals["_zod"]["def"], anyOrder = false): Parse {
  if (def.checks?.length || def.shape === undefined) return refuse;
  const catchall = def.catchall === undefined ? undefined : internals(def.catchall).def;
  // A strict object (catchall never) or any other catchall than `unknown` is left to zod.
  if (catchall !== undefined && catchall.type !== "unknown") return refuse;
  const loose = catchall !== undefined;
  const shape = def.shape;
  const keys = Object.keys(shape);
  if (keys.includes("__proto__")) return refuse;
  const fields = keys.map((key) => {
    const field = internals(shape[key] as Schema);
    // An optional-in field that is optional out may be absent; a defaulted one is left to zod.
    if (field.optin !== undefined && field.optout !== "optional") return undefined;
    return { key, optional: field.optin !== undefined, parse: parserOf(shape[key] as Schema) };
  });
  if (fields.some((field) => field === undefined)) return refuse;
  const known = fields as Array<{ key: string; optional: boolean; parse: Parse }>;
  const keySet = new Set(keys);
  return (value) => {
    if (!isPlain(value)) return UNSURE;
    let changed = false;
    let parsedValues: unknown[] | undefined;
    for (let at = 0; at < known.length; at++) {
      const { key, optional, parse } = known[at] as (typeof known)[number];
      const item = value[key];
      if (item === undefined) {
        // Absent (or undefined, which zod would keep as a key: left to it).
        if (!optional || key in value) return UNSURE;
        continue;
      }
      const parsed = parse(item);
      if (parsed === UNSURE) return UNSURE;
      if (parsed !== item) {
        changed = true;
        parsedValues ??= [];
        parsedValues[at] = parsed;
      }
    }
    // The keys in zod's output order: the schema's, then (loose) the others in their own order.
    let next = 0;
    let extra = false;
    let ordered = true;
    for (const key in value) {
      if (keySet.has(key)) {
        if (extra) ordered = false;
        else {
          while (next < known.length && (known[next] as (typeof known)[number]).key !== key) next++;
          if (next === known.length) ordered = false;
          else next++;
        }
      } else if (!loose || key === "__proto__") return UNSURE;
      else extra = true;
    }
    if ((ordered || anyOrder) && !changed) return value;
    const result: Record<string, unknown> = {};
    for (let at = 0; at < known.length; at++) {
      const { key } = known[at] as (typeof known)[number];
      if (key in value) {
        result[key] =
          parsedValues !== undefined && at in parsedValues ? parsedValues[at] : value[key];
      }
    }
    if (loose) for (const key in value) if (!keySet.has(key)) result[key] = value[key];
    return result;
  };
}
