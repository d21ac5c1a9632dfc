import { describe, expect, it } from "vitest";
import { entryById, recordById } from "../../../src/core/id-record.js";

const ODD_IDS = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", ":", "../"];

describe("recordById and entryById", () => {
  it.each(ODD_IDS)("keeps %j as an own entry and reads it back", (id) => {
    const record = recordById([[id, { value: 1 }]]);
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.hasOwn(record, id)).toBe(true);
    expect(Object.keys(record)).toEqual([id]);
    expect(entryById(record, id)).toEqual({ value: 1 });
  });

  it.each(ODD_IDS)("finds no entry for %j in a record without it", (id) => {
    const record = recordById([["call_1", { value: 1 }]]);
    expect(entryById(record, id)).toBeUndefined();
    expect(entryById({}, id)).toBeUndefined();
  });

  it("survives a JSON round trip with a __proto__ id", () => {
    const record = recordById([
      ["__proto__", "a"],
      ["constructor", "b"],
    ]);
    const copy = JSON.parse(JSON.stringify(record)) as Record<string, string>;
    expect(entryById(copy, "__proto__")).toBe("a");
    expect(entryById(copy, "constructor")).toBe("b");
    expect(entryById({ ...copy }, "__proto__")).toBe("a");
    expect(entryById(structuredClone(copy), "__proto__")).toBe("a");
  });
});
