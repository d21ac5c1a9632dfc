import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeIssues, validateInput } from "../../../src/tools/validate.js";

const Address = z.object({
  street: z.string(),
  zip: z.string().regex(/^\d{5}$/),
});
const Order = z.object({
  customer: z.object({ name: z.string().min(1), address: Address }),
  items: z.array(z.object({ sku: z.string(), quantity: z.number().int().positive() })),
});

const failure = (schema: z.ZodType, input: unknown): string => {
  const validation = validateInput(schema, input);
  if (validation.ok) throw new Error("expected the input to be invalid");
  return validation.message;
};

describe("validateInput", () => {
  it("returns the parsed value on success", () => {
    const schema = z.object({ query: z.string().trim(), limit: z.number().default(10) });
    expect(validateInput(schema, { query: "  cats " })).toEqual({
      ok: true,
      value: { query: "cats", limit: 10 },
    });
  });

  it("names a top-level failing field", () => {
    const message = failure(z.object({ query: z.string() }), { query: 1 });
    expect(message).toMatch(/^query: /);
    expect(message).toMatch(/string/);
  });

  it("names nested object paths with dots", () => {
    const message = failure(Order, {
      customer: { name: "Ada", address: { street: "Main", zip: "abc" } },
      items: [],
    });
    expect(message).toMatch(/^customer\.address\.zip: /);
  });

  it("names array indices in the path", () => {
    const message = failure(Order, {
      customer: { name: "Ada", address: { street: "Main", zip: "12345" } },
      items: [
        { sku: "a", quantity: 1 },
        { sku: "b", quantity: 0 },
      ],
    });
    expect(message).toMatch(/^items\.1\.quantity: /);
  });

  it("lists every problem, separated by semicolons", () => {
    const message = failure(Order, {
      customer: { name: "", address: { street: 5, zip: "12345" } },
      items: [{ sku: 1, quantity: 1 }],
    });
    const parts = message.split("; ");
    const paths = parts.map((part) => part.split(": ")[0]);
    expect(paths).toEqual(
      expect.arrayContaining(["customer.name", "customer.address.street", "items.0.sku"]),
    );
    expect(parts).toHaveLength(3);
  });

  it("names the whole input when it is not an object", () => {
    const message = failure(z.object({ query: z.string() }), "just text");
    expect(message).toMatch(/^\(input\): /);
  });

  it("reports unknown keys of a strict object", () => {
    const message = failure(z.strictObject({ query: z.string() }), { query: "x", extra: 1 });
    expect(message).toMatch(/^\(input\): /);
    expect(message).toContain("extra");
  });
});

describe("describeIssues", () => {
  it("formats each issue as `path: message`", () => {
    const parsed = z
      .object({ a: z.object({ b: z.number() }), c: z.string() })
      .safeParse({ a: { b: "x" }, c: 3 });
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    const lines = describeIssues(parsed.error.issues).split("; ");
    expect(lines).toEqual(
      parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
    );
    expect(lines[0]).toMatch(/^a\.b: /);
    expect(lines[1]).toMatch(/^c: /);
  });

  it("is empty for no issues", () => {
    expect(describeIssues([])).toBe("");
  });
});
