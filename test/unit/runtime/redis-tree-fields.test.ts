import { describe, expect, it } from "vitest";
import { childRunId } from "../../../src/engine/as-tool.js";
import { childField, childOfField } from "../../../src/runtime/redis/tree-fields.js";

/** What Redis stores of a string: its UTF-8 (a lone surrogate becomes U+FFFD). */
const stored = (text: string) => Buffer.from(text, "utf8").toString("hex");

describe("a child's field in its parent's run hash", () => {
  const parents = ["run-1", "", "a.b", "p.", "\uD800", "工具"];
  const calls = [
    "",
    ":",
    ".",
    "call_1",
    "工具-🔧-é",
    "\uD800",
    "\uDC00x",
    "\uFFFD",
    "\u0000",
    "\u0000x",
    ">",
    "=",
    "<",
    "record",
    "x".repeat(300),
  ];

  it("names each child, by call or by id, and gives its run id back exactly", () => {
    for (const parent of parents) {
      const children = [
        ...calls.map((call) => childRunId(parent, call)),
        // Children not named by the call that started them.
        ...calls.map((call) => `other${call}`),
      ];
      const fields = children.map((child) => childField(parent, child));
      for (const [at, field] of fields.entries()) {
        expect(childOfField(parent, field)).toBe(children[at]);
        // Never one of the run's own fields (letters), nor the running count.
        expect(field).toMatch(/^[>=]/);
        // What Redis keeps of it (UTF-8) still gives the field back: nothing is lost.
        expect(Buffer.from(stored(field), "hex").toString("utf8")).toBe(field);
      }
      // Distinct children, distinct fields, as Redis stores them.
      expect(new Set(fields.map(stored)).size).toBe(new Set(children).size);
    }
  });

  it("is short for a child named by its call: the call id and one character", () => {
    expect(childField("run-1", "run-1.call_1")).toBe(">call_1");
    expect(childField("run-1", "run-2.call_1")).toBe("=run-2.call_1");
  });

  it("names no child for the hash's other fields", () => {
    for (const field of ["record", "status", "fence", "<", "", "etrim"]) {
      expect(childOfField("run-1", field)).toBeUndefined();
    }
  });
});
