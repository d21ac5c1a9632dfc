import { entryById, recordById } from "../core/id-record.js";
import { hasSecretKey, REDACTED, redactSecrets } from "../core/secret-keys.js";
import type { JSONSchema } from "../core/values.js";

// A tool marks an input field secret in its schema: `z.string().meta({ secret: true })` (zod
// writes the mark into the JSON Schema as `"secret": true`), or `"secret": true` in a JSON
// Schema input. harnessx never shows or logs such a field's value: wherever a tool input is
// shown (the dashboard, the CLI), it is replaced by `[redacted]`, by the field's path.

/**
 * Where a tool's secret fields are: one path per field, each a list of property names from the
 * input's root, with `"*"` for any array item or any property of a map.
 */
export type SecretPaths = readonly (readonly string[])[];

/** The secret fields of each tool, by tool name (tools without any are left out). */
export type SecretInputs = Readonly<Record<string, SecretPaths>>;

const ANY = "*";
const DEEP = "**";
const COMBINATORS = ["anyOf", "oneOf", "allOf"] as const;

/**
 * The paths of the fields a tool's JSON Schema input marks `secret: true`, at any depth. Under a
 * recursive schema (`$ref` to an enclosing definition) a path holds `"**"`: any number of
 * levels, so every repetition of the marked field is covered.
 */
export function secretPathsOf(schema: JSONSchema): string[][] {
  return pathsIn(schema, schema, undefined);
}

/** The secret paths from `start` on; a recursion back to `stop` is left to the caller's `"**"`. */
function pathsIn(root: JSONSchema, start: unknown, stop: unknown): string[][] {
  const found: string[][] = [];
  const seen = new Set<unknown>();
  const visit = (node: unknown, path: string[]): void => {
    if (typeof node !== "object" || node === null) return;
    if (node === stop && seen.size > 0) return;
    if (seen.has(node)) {
      // A recursion: what the enclosing definition marks, at any depth below here.
      for (const inner of pathsIn(root, node, node)) found.push([...path, DEEP, ...inner]);
      return;
    }
    const part = node as Record<string, unknown>;
    if (part.secret === true) {
      found.push(path);
      return;
    }
    seen.add(node);
    if (typeof part.$ref === "string") visit(resolve(root, part.$ref), path);
    const properties = part.properties;
    if (typeof properties === "object" && properties !== null) {
      for (const [key, each] of Object.entries(properties)) visit(each, [...path, key]);
    }
    for (const key of ["items", "additionalProperties"] as const) visit(part[key], [...path, ANY]);
    if (Array.isArray(part.prefixItems)) {
      for (const each of part.prefixItems) visit(each, [...path, ANY]);
    }
    for (const key of COMBINATORS) {
      if (Array.isArray(part[key])) for (const each of part[key]) visit(each, path);
    }
    seen.delete(node);
  };
  visit(start, []);
  return found;
}

/** `#/$defs/Name` (or `#/definitions/…`) within `root`. */
function resolve(root: JSONSchema, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
    node =
      typeof node === "object" && node !== null ? entryById(node as JSONSchema, key) : undefined;
  }
  return node;
}

/** A copy of a JSON Schema without its `secret` marks, as providers are sent it. */
export function withoutSecretMarks(schema: JSONSchema): JSONSchema {
  return strip(schema) as JSONSchema;
}

function strip(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strip);
  if (typeof node !== "object" || node === null) return node;
  return recordById(
    Object.entries(node)
      .filter(([key, each]) => !(key === "secret" && typeof each === "boolean"))
      .map(([key, each]) => [key, strip(each)] as const),
  );
}

/**
 * A copy of a tool input with the value at every secret path replaced by `[redacted]`, and, as
 * everywhere, every field named like a secret (`password`, `apiKey`, `token`… see
 * `SECRET_KEYS`).
 */
export function redactInput<T>(input: T, paths: SecretPaths = []): T {
  return redactPaths(redactSecrets(input), paths);
}

function redactPaths<T>(input: T, paths: SecretPaths): T {
  let copy: unknown = input;
  for (const path of paths) copy = redactAt(copy, path);
  return copy as T;
}

function redactAt(node: unknown, path: readonly string[]): unknown {
  if (path.length === 0) return node === undefined ? node : REDACTED;
  if (typeof node !== "object" || node === null) return node;
  const [head = "", ...rest] = path;
  if (head === DEEP) {
    // Here, and at every level below.
    const here = redactAt(node, rest);
    if (typeof here !== "object" || here === null) return here;
    return redactAt(here, [ANY, ...path]);
  }
  if (Array.isArray(node)) return head === ANY ? node.map((each) => redactAt(each, rest)) : node;
  return recordById(
    Object.entries(node).map(
      ([key, each]) => [key, head === ANY || key === head ? redactAt(each, rest) : each] as const,
    ),
  );
}

/**
 * A copy of any JSON value (a run's detail, its events, a page of approvals) with every tool
 * input in it redacted (`redactInput`): the `input` of each object that names its tool
 * (`{ name, input }`: tool calls, `tool_use` blocks, pending approvals, timeline tool calls),
 * by the secret paths of that tool in `secrets`; and every field named like a secret anywhere.
 */
export function redactToolInputs<T>(value: T, secrets: SecretInputs = {}): T {
  return walk(redactSecrets(value), secrets) as T;
}

/**
 * A copy of a value with every tool input in it redacted by the same rule as everywhere
 * (`redactInput`: the fields its tool marks secret, and those named like a secret), and nothing
 * else touched: for the flight recorder, whose entries also hold tool schemas and settings that
 * merely mention such names, and whose own `redact` option decides about the rest.
 */
export function redactInputsOnly<T>(value: T, secrets: SecretInputs): T {
  return walk(value, secrets, true) as T;
}

/**
 * Walks a value to its tool inputs (`{ name, input }`), redacting each by its tool's marks and,
 * with `named`, by the secret names too (elsewhere those are handled by the caller). What holds
 * nothing to redact is returned as it is, not copied: recording walks every message once.
 */
function walk(node: unknown, secrets: SecretInputs, named = false): unknown {
  if (Array.isArray(node)) {
    let copy: unknown[] | undefined;
    for (const [index, each] of node.entries()) {
      const next = walk(each, secrets, named);
      if (next === each) continue;
      copy ??= [...node];
      copy[index] = next;
    }
    return copy ?? node;
  }
  if (typeof node !== "object" || node === null) return node;
  const object = node as Record<string, unknown>;
  const isToolInput = typeof object.name === "string" && typeof object.input === "object";
  const paths = isToolInput ? entryById(secrets, object.name as string) : undefined;
  const redactHere = (input: unknown) => {
    if (named && (paths !== undefined || hasSecretKey(input))) return redactInput(input, paths);
    return paths === undefined ? input : redactPaths(input, paths);
  };
  let changed: Map<string, unknown> | undefined;
  for (const key of Object.keys(object)) {
    const each = object[key];
    const next = key === "input" && isToolInput ? redactHere(each) : walk(each, secrets, named);
    if (next === each) continue;
    changed ??= new Map();
    changed.set(key, next);
  }
  if (changed === undefined) return node;
  const replaced = changed;
  return recordById(
    Object.entries(object).map(
      ([key, each]) => [key, replaced.has(key) ? replaced.get(key) : each] as const,
    ),
  );
}
