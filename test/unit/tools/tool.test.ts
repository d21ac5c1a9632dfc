import { describe, expect, it } from "vitest";
import { z } from "zod";
import { HarnessError, ToolDefinitionError, tool } from "../../../src/index.js";
import { thrown } from "../../support/thrown.js";

const search = () =>
  tool({
    name: "search",
    description: "Return a fixture search result for the requested query.",
    input: z.object({ query: z.string(), limit: z.number().int().optional() }),
    handler: async ({ query }) => `Results for ${query}`,
  });

describe("tool()", () => {
  it("keeps name and description and defaults recovery to retry", () => {
    const defined = search();
    expect(defined.name).toBe("search");
    expect(defined.description).toBe("Return a fixture search result for the requested query.");
    expect(defined.recovery).toBe("retry");
  });

  it("keeps an explicit recovery policy", () => {
    for (const recovery of ["retry", "fail", "ask"] as const) {
      const defined = tool({
        name: "charge",
        description: "Charge a card.",
        input: z.object({ amount: z.number() }),
        handler: () => "ok",
        recovery,
      });
      expect(defined.recovery).toBe(recovery);
    }
  });

  it("derives an object JSON schema from the zod input, without $schema", () => {
    const defined = search();
    expect(defined.inputSchema).not.toHaveProperty("$schema");
    expect(defined.inputSchema.type).toBe("object");
    expect(defined.inputSchema.properties).toEqual({
      query: { type: "string" },
      limit: expect.objectContaining({ type: "integer" }) as unknown,
    });
    expect(defined.inputSchema.required).toEqual(["query"]);
    // The schema is plain data: a JSON round trip leaves it unchanged.
    expect(JSON.parse(JSON.stringify(defined.inputSchema))).toEqual(defined.inputSchema);
  });

  it("keeps the zod schema for validation and the handler as given", async () => {
    const defined = search();
    expect(defined.input.safeParse({ query: "x" }).success).toBe(true);
    expect(defined.input.safeParse({ query: 1 }).success).toBe(false);
    const context = { signal: new AbortController().signal, runId: "r", toolCallId: "c" };
    await expect(defined.handler({ query: "cats" }, context)).resolves.toBe("Results for cats");
  });

  it("returns a frozen definition", () => {
    expect(Object.isFrozen(search())).toBe(true);
  });

  it.each(["search", "a", "delete_file", "get-weather", "Tool9", "x".repeat(64)])(
    "accepts the name %j",
    (name) => {
      expect(tool({ name, description: "", input: z.object({}), handler: () => "" }).name).toBe(
        name,
      );
    },
  );

  it.each(["", "has space", "dotted.name", "slash/name", "ünïcode", "x".repeat(65)])(
    "refuses the name %j with ToolDefinitionError",
    (name) => {
      const error = thrown(() =>
        tool({ name, description: "", input: z.object({}), handler: () => "" }),
      );
      expect(error).toBeInstanceOf(ToolDefinitionError);
      expect(HarnessError.isHarnessError(error)).toBe(true);
      expect((error as ToolDefinitionError).code).toBe("tool_invalid");
      expect((error as Error).message).toContain(JSON.stringify(name));
    },
  );

  it.each([
    ["a string", z.string()],
    ["a number", z.number()],
    ["an array", z.array(z.string())],
  ])("refuses %s input schema with ToolDefinitionError", (_label, input) => {
    const define = () => tool({ name: "bad", description: "", input, handler: () => "" });
    expect(define).toThrow(ToolDefinitionError);
    expect(define).toThrow(/bad/);
    expect(define).toThrow(/z\.object/);
  });

  it("refuses a schema that JSON Schema cannot express", () => {
    const define = () =>
      tool({
        name: "dated",
        description: "",
        input: z.object({ when: z.date() }),
        handler: () => "",
      });
    expect(define).toThrow(ToolDefinitionError);
    expect(define).toThrow(/dated/);
  });

  it("refuses a definition without a handler function", () => {
    const define = () =>
      tool({
        name: "nohandler",
        description: "",
        input: z.object({}),
        handler: "not a function" as unknown as () => string,
      });
    expect(define).toThrow(ToolDefinitionError);
    expect(define).toThrow(/nohandler/);
  });
});

describe("tool() timeoutMs", () => {
  const define = (timeoutMs: number | undefined) =>
    tool({
      name: "slow",
      description: "Takes its time.",
      input: z.object({}),
      handler: () => "ok",
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });

  it("keeps a given timeout and leaves it absent otherwise (the agent's config decides)", () => {
    expect(define(50).timeoutMs).toBe(50);
    expect(define(undefined).timeoutMs).toBeUndefined();
    expect("timeoutMs" in define(undefined)).toBe(false);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])(
    "refuses timeoutMs %s with a ToolDefinitionError naming the tool",
    (timeoutMs) => {
      const error = thrown(() => define(timeoutMs));
      expect(error).toBeInstanceOf(ToolDefinitionError);
      expect((error as Error).message).toContain('Tool "slow": timeoutMs');
    },
  );
});
