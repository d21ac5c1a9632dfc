import { describe, expect, it } from "vitest";
import { jsonSchemaInput } from "../../../src/tools/json-schema-input.js";
import { validateInput } from "../../../src/tools/validate.js";

const draft7 = "http://json-schema.org/draft-07/schema#";

describe("jsonSchemaInput", () => {
  it("keeps the schema for the model, without its $schema header", () => {
    const { inputSchema } = jsonSchemaInput({
      $schema: draft7,
      type: "object",
      properties: { query: { type: "string" } },
      required: ["query"],
    });
    expect(inputSchema).toEqual({
      type: "object",
      properties: { query: { type: "string" } },
      required: ["query"],
    });
  });

  it("accepts valid input unchanged: no coercion, no defaults filled in", () => {
    const { input } = jsonSchemaInput({
      type: "object",
      properties: { count: { type: "number", default: 3 }, label: { type: "string" } },
    });
    expect(validateInput(input, { label: "x" })).toEqual({ ok: true, value: { label: "x" } });
    expect(validateInput(input, { count: "3" })).toEqual({
      ok: false,
      message: "count: must be number",
    });
  });

  it("names every failing path, like a zod schema's issues", () => {
    const { input } = jsonSchemaInput({
      $schema: draft7,
      type: "object",
      properties: {
        query: { type: "string", minLength: 2 },
        tags: { type: "array", items: { type: "string" } },
        "a/b": { type: "integer" },
      },
      required: ["query", "limit"],
      additionalProperties: false,
    });
    const outcome = validateInput(input, { query: "x", tags: ["ok", 5], "a/b": 1.5, extra: true });
    expect(outcome.ok).toBe(false);
    const problems = outcome.ok ? [] : outcome.message.split("; ").sort();
    expect(problems).toEqual([
      "a/b: must be integer",
      "extra: is not allowed",
      "limit: is required",
      "query: must NOT have fewer than 2 characters",
      "tags.1: must be string",
    ]);
  });

  it("refuses input that is not an object", () => {
    const { input } = jsonSchemaInput({ type: "object" });
    for (const value of ["text", 3, null, ["a"]]) {
      expect(validateInput(input, value).ok).toBe(false);
    }
  });

  it("checks formats", () => {
    const { input } = jsonSchemaInput({
      type: "object",
      properties: { email: { type: "string", format: "email" } },
    });
    expect(validateInput(input, { email: "a@example.test" }).ok).toBe(true);
    expect(validateInput(input, { email: "nope" })).toEqual({
      ok: false,
      message: 'email: must match format "email"',
    });
  });

  it("reads 2020-12 (MCP's default) and draft-07 keywords by the declared dialect", () => {
    const modern = jsonSchemaInput({
      type: "object",
      properties: {
        pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
      },
    });
    expect(validateInput(modern.input, { pair: ["a", 1] }).ok).toBe(true);
    expect(validateInput(modern.input, { pair: [1, "a"] }).ok).toBe(false);

    const older = jsonSchemaInput({
      $schema: draft7,
      type: "object",
      properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }] } },
    });
    expect(validateInput(older.input, { pair: ["a", 1] }).ok).toBe(true);
    expect(validateInput(older.input, { pair: [1, "a"] }).ok).toBe(false);
  });

  it("resolves local references, and lets two schemas share an $id", () => {
    const schema = {
      $id: "https://example.test/input",
      type: "object",
      properties: { size: { $ref: "#/$defs/size" } },
      $defs: { size: { type: "integer", minimum: 1 } },
    };
    const first = jsonSchemaInput(schema);
    const second = jsonSchemaInput(schema);
    expect(validateInput(first.input, { size: 0 })).toEqual({
      ok: false,
      message: "size: must be >= 1",
    });
    expect(validateInput(second.input, { size: 2 }).ok).toBe(true);
  });

  it("throws for a schema that is not an object schema or does not compile", () => {
    expect(() => jsonSchemaInput("object")).toThrow(/not a JSON object/);
    expect(() => jsonSchemaInput({ type: "string" })).toThrow(/not "object"/);
    expect(() =>
      jsonSchemaInput({ type: "object", properties: { a: { $ref: "#/$defs/missing" } } }),
    ).toThrow(/resolve reference/);
  });
});
