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
