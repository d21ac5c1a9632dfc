import { describe, expect, it } from "vitest";
import { jsonProblem, MAX_JSON_DEPTH } from "../../../src/core/json-value.js";

/** An array nested `depth` levels deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

describe("jsonProblem", () => {
  it.each<[string, unknown]>([
    ["a string", "text"],
    ["numbers, booleans and null", [1, -2.5, true, false, null]],
    [
      "plain and null-prototype objects",
      { a: { b: Object.assign(Object.create(null), { c: 1 }) } },
    ],
    ["brackets inside strings", { text: "[[[[{{{{", escaped: '\\"[' }],
    ["a __proto__ key from JSON", JSON.parse('{"__proto__": {"x": 1}}')],
    ["nesting at the limit", nested(MAX_JSON_DEPTH)],
    [
      "a shared (not circular) reference",
      (() => {
        const shared = { a: 1 };
        return [shared, shared];
      })(),
    ],
  ])("accepts %s", (_label, value) => {
    expect(jsonProblem(value)).toBeUndefined();
  });

  it.each<[string, unknown, RegExp]>([
    ["nesting past the limit", nested(MAX_JSON_DEPTH + 1), /nests deeper than 100 levels/],
    ["nesting that overflows the stack", nested(200_000), /nests deeper than 100 levels/],
    [
      "a cycle",
      (() => {
        const cycle: Record<string, unknown> = {};
        cycle.self = cycle;
        return cycle;
      })(),
      /refers to itself/,
    ],
    ["a bigint", { amount: 10n }, /contains a bigint/],
    ["a function", { run: () => 1 }, /contains a function/],
    ["a symbol", [Symbol("s")], /contains a symbol/],
    ["undefined in an array", [undefined], /contains undefined/],
    ["an undefined property", { a: undefined }, /contains undefined/],
    ["NaN", { n: Number.NaN }, /contains NaN/],
    ["Infinity", [Number.POSITIVE_INFINITY], /contains Infinity/],
    ["a Date", { when: new Date(0) }, /contains a Date/],
    ["a Map", { map: new Map() }, /contains a Map/],
    [
      "a throwing getter",
      Object.defineProperty({}, "boom", {
        enumerable: true,
        get() {
          throw new Error("getter broke");
        },
      }),
      /cannot be serialised as JSON \(getter broke\)/,
    ],
  ])("names the problem with %s", (_label, value, problem) => {
    expect(jsonProblem(value)).toMatch(problem);
  });

  it("takes another depth limit", () => {
    expect(jsonProblem(nested(3), 2)).toBe("nests deeper than 2 levels");
    expect(jsonProblem(nested(2), 2)).toBeUndefined();
  });

  it("counts the levels a value sits in", () => {
    expect(jsonProblem(nested(2), 4, 3)).toBe("nests deeper than 4 levels");
    expect(jsonProblem(nested(1), 4, 3)).toBeUndefined();
  });
});
