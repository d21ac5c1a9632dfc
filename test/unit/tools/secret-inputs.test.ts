import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  redactInput,
  redactToolInputs,
  secretPathsOf,
  ToolRegistry,
  tool,
} from "../../../src/index.js";

const CANARY = "canary-7f3a9";

const vault = tool({
  name: "vault",
  description: "Opens the vault.",
  input: z.object({
    account: z.string(),
    phrase: z.string().meta({ secret: true }),
    nested: z.object({ pin: z.string().meta({ secret: true }), label: z.string() }).optional(),
    keys: z.array(z.object({ id: z.string(), material: z.string().meta({ secret: true }) })),
    extra: z.record(z.string(), z.string().meta({ secret: true })).optional(),
    either: z.union([z.string().meta({ secret: true }), z.number()]).optional(),
  }),
  handler: async () => "opened",
});

describe("secret tool inputs (.meta({ secret: true }))", () => {
  it("finds every marked field, at any depth, through arrays, maps, optionals and unions", () => {
    expect(secretPathsOf(vault.inputSchema)).toEqual([
      ["phrase"],
      ["nested", "pin"],
      ["keys", "*", "material"],
      ["extra", "*"],
      ["either"],
    ]);
    expect(secretPathsOf(z.toJSONSchema(z.object({ plain: z.string() })))).toEqual([]);
  });

  it("follows $ref into $defs, recursive schemas included", () => {
    const schema = {
      type: "object",
      properties: { first: { $ref: "#/$defs/Node" } },
      $defs: {
        Node: {
          type: "object",
          properties: { key: { type: "string", secret: true }, next: { $ref: "#/$defs/Node" } },
        },
      },
    };
    const paths = secretPathsOf(schema);
    expect(paths).toEqual([
      ["first", "key"],
      ["first", "next", "**", "key"],
    ]);
    const deep = { first: { key: CANARY, next: { key: CANARY, next: { key: CANARY, other: 1 } } } };
    const redacted = redactInput(deep, paths);
    expect(JSON.stringify(redacted)).not.toContain(CANARY);
    expect(redacted.first.next.next.other).toBe(1);
  });

  it("redacts marked fields and fields named like secrets, leaving the rest and the original", () => {
    const input = {
      account: "ada",
      phrase: CANARY,
      nested: { pin: CANARY, label: "home" },
      keys: [
        { id: "k1", material: CANARY },
        { id: "k2", material: CANARY },
      ],
      extra: { a: CANARY },
      password: CANARY,
    };
    const redacted = redactInput(input, secretPathsOf(vault.inputSchema));
    expect(JSON.stringify(redacted)).not.toContain(CANARY);
    expect(redacted).toEqual({
      account: "ada",
      phrase: "[redacted]",
      nested: { pin: "[redacted]", label: "home" },
      keys: [
        { id: "k1", material: "[redacted]" },
        { id: "k2", material: "[redacted]" },
      ],
      extra: { a: "[redacted]" },
      password: "[redacted]",
    });
    expect(input.phrase).toBe(CANARY);
  });

  it("redacts the input of every object naming its tool, anywhere in a value", () => {
    const secrets = { vault: secretPathsOf(vault.inputSchema) };
    const detail = {
      messages: [
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "c1", name: "vault", input: { phrase: CANARY } }],
        },
      ],
      pending: [{ toolCallId: "c1", name: "vault", input: { phrase: CANARY }, reason: "asks" }],
      events: [
        { type: "tool_start", toolCall: { id: "c1", name: "vault", input: { phrase: CANARY } } },
      ],
      other: [{ name: "search", input: { phrase: "not secret for search" } }],
    };
    const shown = redactToolInputs(detail, secrets);
    expect(JSON.stringify(shown)).not.toContain(CANARY);
    expect(shown.other).toEqual(detail.other);
    expect(shown.pending[0]?.reason).toBe("asks");
  });

  it("does not tell providers about the marks", () => {
    const registry = new ToolRegistry([vault]);
    expect(JSON.stringify(registry.schemas())).not.toContain('"secret"');
    expect(registry.secretInputs()).toEqual({ vault: secretPathsOf(vault.inputSchema) });
    expect(JSON.stringify(vault.inputSchema)).toContain('"secret":true');
  });
});
