import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ToolCall,
  type ToolContext,
  ToolDefinitionError,
  ToolRegistry,
  tool,
} from "../../../src/index.js";

const makeTool = (name: string, handler: (input: { query: string }) => unknown = () => name) =>
  tool({
    name,
    description: `The ${name} tool.`,
    input: z.object({ query: z.string() }),
    handler,
  });

const call = (name: string, input: Record<string, unknown>, id = "call-1"): ToolCall => ({
  id,
  name,
  input,
});

describe("ToolRegistry", () => {
  it("holds tools given to the constructor and registered later", () => {
    const search = makeTool("search");
    const fetchTool = makeTool("fetch");
    const registry = new ToolRegistry([search]);
    registry.register(fetchTool);
    expect(registry.get("search")).toBe(search);
    expect(registry.get("fetch")).toBe(fetchTool);
    expect(registry.has("search")).toBe(true);
    expect(registry.has("missing")).toBe(false);
    expect(registry.get("missing")).toBeUndefined();
    expect(registry.size).toBe(2);
  });

  it("lists schemas in registration order", () => {
    const registry = new ToolRegistry([makeTool("zeta"), makeTool("alpha")]);
    registry.register(makeTool("mid"));
    const schemas = registry.schemas();
    expect(schemas.map((schema) => schema.name)).toEqual(["zeta", "alpha", "mid"]);
    expect(schemas[0]).toEqual({
      name: "zeta",
      description: "The zeta tool.",
      inputSchema: makeTool("zeta").inputSchema,
    });
  });

  it("returns the same schemas array until the set of tools changes", () => {
    const registry = new ToolRegistry([makeTool("one")]);
    const first = registry.schemas();
    expect(registry.schemas()).toBe(first);

    const registration = registry.register(makeTool("two"));
    const second = registry.schemas();
    expect(second).not.toBe(first);
    expect(second.map((schema) => schema.name)).toEqual(["one", "two"]);
    expect(first.map((schema) => schema.name)).toEqual(["one"]);
    expect(registry.schemas()).toBe(second);

    registration.close();
    const third = registry.schemas();
    expect(third).not.toBe(second);
    expect(third.map((schema) => schema.name)).toEqual(["one"]);
  });

  it("refuses a second tool of the same name and keeps the first", () => {
    const first = makeTool("search");
    const registry = new ToolRegistry([first]);
    expect(() => registry.register(makeTool("search"))).toThrow(ToolDefinitionError);
    expect(() => registry.register(makeTool("search"))).toThrow(/"search"/);
    expect(registry.get("search")).toBe(first);
    expect(registry.size).toBe(1);
  });

  it("refuses duplicate names given to the constructor", () => {
    expect(() => new ToolRegistry([makeTool("dup"), makeTool("dup")])).toThrow(ToolDefinitionError);
  });

  it("removes a tool when its registration closes, idempotently", () => {
    const registry = new ToolRegistry();
    const registration = registry.register(makeTool("search"));
    expect(registration.closed).toBe(false);
    registration.close();
    expect(registration.closed).toBe(true);
    expect(registry.has("search")).toBe(false);
    expect(registry.schemas()).toEqual([]);
    registration.close();
    expect(registry.size).toBe(0);
  });

  it("a stale registration does not remove a newer tool of the same name", () => {
    const registry = new ToolRegistry();
    const old = registry.register(makeTool("search"));
    old.close();
    const replacement = makeTool("search");
    registry.register(replacement);
    old.close();
    expect(registry.get("search")).toBe(replacement);
  });

  it("a name becomes free again after its registration closes", () => {
    const registry = new ToolRegistry();
    registry.register(makeTool("search")).close();
    expect(() => registry.register(makeTool("search"))).not.toThrow();
  });
});

describe("ToolRegistry.execute", () => {
  it("runs the handler and returns its string", async () => {
    const registry = new ToolRegistry([makeTool("search", ({ query }) => `Results for ${query}`)]);
    await expect(registry.execute(call("search", { query: "cats" }))).resolves.toEqual({
      toolCallId: "call-1",
      content: "Results for cats",
      isError: false,
    });
  });

  it("passes the input as it is, without validation or parsing (only the engine validates)", async () => {
    const received: unknown[] = [];
    const trimmed = tool({
      name: "trimmed",
      description: "",
      input: z.object({ query: z.string().trim() }),
      handler: (input) => {
        received.push(input);
        return "ok";
      },
    });
    await new ToolRegistry([trimmed]).execute(call("trimmed", { query: "  cats  " }));
    expect(received).toEqual([{ query: "  cats  " }]);
  });

  it("gives the handler a context with the call id, a run id and a signal", async () => {
    const contexts: ToolContext[] = [];
    const registry = new ToolRegistry([
      tool({
        name: "probe",
        description: "",
        input: z.object({}),
        handler: (_input, context) => {
          contexts.push(context);
          return "";
        },
      }),
    ]);
    await registry.execute(call("probe", {}, "call-9"));
    const controller = new AbortController();
    await registry.execute(call("probe", {}, "call-10"), {
      runId: "run-5",
      signal: controller.signal,
    });
    expect(contexts[0]?.toolCallId).toBe("call-9");
    expect(contexts[0]?.runId).toBe("direct");
    expect(contexts[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(contexts[0]?.signal.aborted).toBe(false);
    expect(contexts[1]?.toolCallId).toBe("call-10");
    expect(contexts[1]?.runId).toBe("run-5");
    // The handler's signal follows the caller's (and its own timeout).
    expect(contexts[1]?.signal.aborted).toBe(false);
    controller.abort();
    expect(contexts[1]?.signal.aborted).toBe(true);
  });

  it("returns an error result naming an unknown tool, without throwing", async () => {
    const registry = new ToolRegistry([makeTool("search")]);
    const result = await registry.execute(call("nope", { query: "x" }, "call-2"));
    expect(result.isError).toBe(true);
    expect(result.toolCallId).toBe("call-2");
    expect(result.content).toContain('"nope"');
  });

  it("does not validate: input the schema would refuse reaches the handler", async () => {
    const received: unknown[] = [];
    const registry = new ToolRegistry([
      makeTool("search", (input) => {
        received.push(input);
        return "ran";
      }),
    ]);
    const result = await registry.execute(call("search", { query: 42 }));
    expect(result).toEqual({ toolCallId: "call-1", content: "ran", isError: false });
    expect(received).toEqual([{ query: 42 }]);
  });

  it("turns a throwing handler into an error result with its message", async () => {
    const registry = new ToolRegistry([
      makeTool("search", () => {
        throw new Error("search backend down");
      }),
    ]);
    await expect(registry.execute(call("search", { query: "x" }))).resolves.toEqual({
      toolCallId: "call-1",
      content: "search backend down",
      isError: true,
    });
  });

  it("turns a rejecting async handler into an error result", async () => {
    const registry = new ToolRegistry([
      makeTool("search", async () => {
        throw new Error("async failure");
      }),
    ]);
    const result = await registry.execute(call("search", { query: "x" }));
    expect(result).toEqual({ toolCallId: "call-1", content: "async failure", isError: true });
  });

  it("stringifies a thrown non-Error value", async () => {
    const registry = new ToolRegistry([
      makeTool("search", () => {
        throw "plain string failure";
      }),
    ]);
    const result = await registry.execute(call("search", { query: "x" }));
    expect(result).toEqual({
      toolCallId: "call-1",
      content: "plain string failure",
      isError: true,
    });
  });

  it("returns a non-string handler value as JSON", async () => {
    const value = { hits: [{ title: "a", score: 1 }], total: 1 };
    const registry = new ToolRegistry([makeTool("search", async () => value)]);
    const result = await registry.execute(call("search", { query: "x" }));
    expect(result.isError).toBe(false);
    expect(result.content).toBe(JSON.stringify(value));
    expect(JSON.parse(result.content)).toEqual(value);
  });

  it("gives a value JSON cannot represent an error result naming why, never [object Object]", async () => {
    const cycle: Record<string, unknown> = { name: "loop" };
    cycle.self = cycle;
    const cases: [unknown, string][] = [
      [{ amount: 10n }, 'a BigInt at "amount"'],
      [10n, "a BigInt at the value returned"],
      [cycle, "a cycle (an object that contains itself)"],
      [() => "hi", "a function at the value returned"],
      [{ ok: true, callback: () => 1 }, 'a function at "callback"'],
      [[1, Symbol("s")], 'a symbol at "1"'],
    ];
    for (const [output, problem] of cases) {
      const registry = new ToolRegistry([makeTool("odd", () => output)]);
      const result = await registry.execute(call("odd", { query: "x" }));
      expect(result).toEqual({
        toolCallId: "call-1",
        content: `Tool "odd" returned a value JSON cannot represent (${problem}); return a string or JSON data.`,
        isError: true,
      });
    }
  });

  it("returns numbers, booleans and null as JSON text and undefined as empty text", async () => {
    const outputs: unknown[] = [7, true, null, undefined, [1, "two"]];
    const expected = ["7", "true", "null", "", '[1,"two"]'];
    for (const [index, output] of outputs.entries()) {
      const registry = new ToolRegistry([makeTool("value", () => output)]);
      const result = await registry.execute(call("value", { query: "x" }));
      expect(result.content).toBe(expected[index]);
      expect(result.isError).toBe(false);
    }
  });
});

describe("ToolRegistry.execute: timeouts", () => {
  it("gives a handler past its tool's timeoutMs an error result", async () => {
    const registry = new ToolRegistry([
      tool({
        name: "hangs",
        description: "Never answers.",
        input: z.object({}),
        handler: () => new Promise(() => {}),
        timeoutMs: 20,
      }),
    ]);
    expect(await registry.execute(call("hangs", {}, "call-7"))).toEqual({
      toolCallId: "call-7",
      content: 'Tool "hangs" timed out after 20 ms.',
      isError: true,
    });
  });
});
