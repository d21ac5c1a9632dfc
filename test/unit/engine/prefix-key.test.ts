import { describe, expect, it } from "vitest";
import { prefixKey } from "../../../src/engine/prefix-key.js";
import type { ToolSchema } from "../../../src/index.js";

const tools = (): ToolSchema[] => [
  {
    name: "search",
    description: "Search the web.",
    inputSchema: { type: "object", properties: { query: { type: "string" } } },
  },
  { name: "fetch", description: "Fetch a page.", inputSchema: { type: "object" } },
];

describe("prefixKey", () => {
  it("is a 32-character hex string", () => {
    expect(prefixKey("You are helpful.", tools())).toMatch(/^[0-9a-f]{32}$/);
    expect(prefixKey("", [])).toMatch(/^[0-9a-f]{32}$/);
  });

  it("is stable for the same system prompt and tools", () => {
    const schemas = tools();
    const key = prefixKey("You are helpful.", schemas);
    expect(prefixKey("You are helpful.", schemas)).toBe(key);
  });

  it("is the same for equal tool lists that are different arrays", () => {
    expect(prefixKey("You are helpful.", tools())).toBe(prefixKey("You are helpful.", tools()));
    expect(prefixKey("You are helpful.", structuredClone(tools()))).toBe(
      prefixKey("You are helpful.", tools()),
    );
  });

  it("changes when the system prompt changes", () => {
    const schemas = tools();
    const key = prefixKey("You are helpful.", schemas);
    expect(prefixKey("You are helpful!", schemas)).not.toBe(key);
    expect(prefixKey("You are helpful. Today is Tuesday.", schemas)).not.toBe(key);
    expect(prefixKey("", schemas)).not.toBe(key);
  });

  it("changes when a tool is added or removed", () => {
    const key = prefixKey("system", tools());
    expect(prefixKey("system", tools().slice(0, 1))).not.toBe(key);
    expect(prefixKey("system", [])).not.toBe(key);
    expect(
      prefixKey("system", [
        ...tools(),
        { name: "shell", description: "Run a command.", inputSchema: { type: "object" } },
      ]),
    ).not.toBe(key);
  });

  it("changes when the tool order, a description or an input schema changes", () => {
    const key = prefixKey("system", tools());
    expect(prefixKey("system", tools().reverse())).not.toBe(key);

    const described = tools();
    described[0] = { ...(described[0] as ToolSchema), description: "Search the whole web." };
    expect(prefixKey("system", described)).not.toBe(key);

    const reshaped = tools();
    reshaped[1] = {
      ...(reshaped[1] as ToolSchema),
      inputSchema: { type: "object", properties: { url: { type: "string" } } },
    };
    expect(prefixKey("system", reshaped)).not.toBe(key);
  });

  it("does not confuse text moved between the system prompt and the tools", () => {
    const schema: ToolSchema = { name: "a", description: "", inputSchema: { type: "object" } };
    expect(prefixKey("a", [schema])).not.toBe(prefixKey("", [schema]));
    expect(prefixKey("[]", [])).not.toBe(prefixKey("", []));
  });
});
