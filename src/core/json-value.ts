import { messageOf } from "./errors.js";

/** How deeply run input and provider responses may nest: objects and arrays, from the top. */
export const MAX_JSON_DEPTH = 100;

class NotJsonError extends Error {}

const describe = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : String(value);
    case "object": {
      if (value === null || Array.isArray(value)) return undefined;
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype === Object.prototype || prototype === null) return undefined;
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
      return typeof name === "string" && name !== "" ? `a ${name}` : "a class instance";
    }
    default:
      return typeof value === "undefined" ? "undefined" : `a ${typeof value}`;
  }
};

// The deepest nesting of objects and arrays in JSON text (brackets inside strings ignored).
function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === "\\") index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{" || char === "[") deepest = Math.max(deepest, ++depth);
    else if (char === "}" || char === "]") depth--;
  }
  return deepest;
}

// True when `value` is plainly JSON data within `levels` more levels of nesting: only null,
// booleans, finite numbers, strings, arrays and plain objects without `toJSON`. False means
// "not sure": anything else (a getter that throws, a cycle, which runs past `levels`) is left
// to the full check below, which names the problem. No string is built, so the common case
// (small, valid tool inputs) costs a walk.
function plainlyJson(value: unknown, levels: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object": {
      if (value === null) return true;
      if (levels === 0) return false;
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          if (!plainlyJson(value[index], levels - 1)) return false;
        }
        return true;
      }
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      if ("toJSON" in value) return false;
      for (const key of Object.keys(value)) {
        if (!plainlyJson((value as Record<string, unknown>)[key], levels - 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Why `value` is not plain JSON data that round-trips unchanged, or undefined when it is:
 * only null, booleans, finite numbers, strings, arrays and plain objects, nested at most
 * `maxDepth` deep, without cycles. Never throws (a too-deep value is not walked recursively
 * by anything that could overflow the stack unguarded).
 */
export function jsonProblem(
  value: unknown,
  maxDepth = MAX_JSON_DEPTH,
  /** How deep `value` itself sits in the document it belongs to (its parents' levels). */
  nestedIn = 0,
): string | undefined {
  try {
    if (plainlyJson(value, maxDepth - nestedIn)) return undefined;
  } catch {
    // A throwing getter or proxy: the full check below names it.
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value, function check(this: unknown, key: string, converted: unknown) {
      // `this[key]` is the value before any `toJSON` (a Date would arrive here as a string).
      const problem = describe((this as Record<string, unknown>)[key]);
      if (problem !== undefined)
        throw new NotJsonError(`contains ${problem}, which is not JSON data`);
      return converted;
    });
  } catch (error) {
    if (error instanceof NotJsonError) return error.message;
    const message = messageOf(error);
    if (error instanceof RangeError && /call stack/i.test(message)) {
      return `nests deeper than ${maxDepth} levels`;
    }
    if (error instanceof TypeError && /circular/i.test(message)) {
      return "refers to itself (a cycle), which is not JSON data";
    }
    return `cannot be serialised as JSON (${message})`;
  }
  if (text === undefined) return "is not JSON data";
  return nestedIn + depthOf(text) > maxDepth ? `nests deeper than ${maxDepth} levels` : undefined;
}
