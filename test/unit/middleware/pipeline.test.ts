import { describe, expect, it } from "vitest";
import {
  type Message,
  Middleware,
  type MiddlewareLike,
  MiddlewarePipeline,
  type MiddlewareStage,
  type ProviderResponse,
  Registration,
  type ToolCall,
  type ToolResult,
  type ToolSchema,
} from "../../../src/index.js";
import { overrides } from "../../../src/middleware/middleware.js";
import {
  runAfterLlmCall,
  runAfterToolExecution,
  runBeforeLlmCall,
  runBeforeToolExecution,
} from "../../../src/middleware/run-stages.js";
import { textResponse } from "../../../src/testing.js";

const STAGES: readonly MiddlewareStage[] = [
  "beforeLlmCall",
  "afterLlmCall",
  "beforeToolExecution",
  "afterToolExecution",
];

const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "hello" }] }];
const tools: ToolSchema[] = [
  { name: "search", description: "Search.", inputSchema: { type: "object", properties: {} } },
];
const call: ToolCall = { id: "call-1", name: "search", input: { query: "  cats  " } };
const result: ToolResult = { toolCallId: "call-1", content: "raw", isError: false };

/** Appends `tag` at every stage so the order of application is visible in the output. */
class Tagging extends Middleware {
  constructor(readonly tag: string) {
    super();
  }

  override async beforeLlmCall(
    input: Message[],
    schemas: ToolSchema[],
  ): Promise<[Message[], ToolSchema[]]> {
    return [
      [...input, { role: "user", content: [{ type: "text", text: this.tag }] }],
      schemas.map((schema) => ({ ...schema, description: `${schema.description}${this.tag}` })),
    ];
  }

  override async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
    return { ...response, model: `${response.model}${this.tag}` };
  }

  override async beforeToolExecution(toolCall: ToolCall): Promise<ToolCall> {
    return {
      ...toolCall,
      input: { ...toolCall.input, query: `${String(toolCall.input.query)}${this.tag}` },
    };
  }

  override async afterToolExecution(toolResult: ToolResult): Promise<ToolResult> {
    return { ...toolResult, content: `${toolResult.content}${this.tag}` };
  }
}

describe("Middleware base class", () => {
  it("returns every input unchanged, as the same objects", async () => {
    const base = new Middleware();
    const [outMessages, outTools] = await base.beforeLlmCall(messages, tools);
    expect(outMessages).toBe(messages);
    expect(outTools).toBe(tools);
    const response = textResponse("hi");
    expect(await base.afterLlmCall(response)).toBe(response);
    expect(await base.beforeToolExecution(call)).toBe(call);
    expect(await base.afterToolExecution(result)).toBe(result);
  });

  it("is async at every stage", () => {
    const base = new Middleware();
    expect(base.beforeLlmCall(messages, tools)).toBeInstanceOf(Promise);
    expect(base.afterLlmCall(textResponse("x"))).toBeInstanceOf(Promise);
    expect(base.beforeToolExecution(call)).toBeInstanceOf(Promise);
    expect(base.afterToolExecution(result)).toBeInstanceOf(Promise);
  });
});

describe("overrides()", () => {
  it("is false for every stage of the base class", () => {
    for (const stage of STAGES) expect(overrides(new Middleware(), stage)).toBe(false);
  });

  it("is true only for the stages a subclass overrides", () => {
    class OnlyResults extends Middleware {
      override async afterToolExecution(toolResult: ToolResult): Promise<ToolResult> {
        return toolResult;
      }
    }
    const middleware = new OnlyResults();
    expect(STAGES.filter((stage) => overrides(middleware, stage))).toEqual(["afterToolExecution"]);
  });

  it("is true even for an override that only observes", () => {
    class Observer extends Middleware {
      seen = 0;
      override async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
        this.seen += 1;
        return response;
      }
    }
    expect(overrides(new Observer(), "afterLlmCall")).toBe(true);
  });

  it("is true for the methods a plain object has, false for the rest", () => {
    const plain: MiddlewareLike = {
      beforeToolExecution: async (toolCall) => toolCall,
      afterLlmCall: async (response) => response,
    };
    expect(STAGES.filter((stage) => overrides(plain, stage))).toEqual([
      "afterLlmCall",
      "beforeToolExecution",
    ]);
    expect(STAGES.filter((stage) => overrides({}, stage))).toEqual([]);
  });

  it("ignores a stage property that is not a function", () => {
    const notAFunction = { afterLlmCall: "nope" } as unknown as MiddlewareLike;
    expect(overrides(notAFunction, "afterLlmCall")).toBe(false);
  });

  it("treats a plain object that borrows the base method as not overriding", () => {
    const borrowed: MiddlewareLike = { afterLlmCall: Middleware.prototype.afterLlmCall };
    expect(overrides(borrowed, "afterLlmCall")).toBe(false);
  });
});

describe("MiddlewarePipeline", () => {
  it("runs each stage A then B, B receiving A's value", async () => {
    const pipeline = new MiddlewarePipeline();
    pipeline.add(new Tagging("A"));
    pipeline.add(new Tagging("B"));
    const snapshot = pipeline.snapshot();

    const [outMessages, outTools] = await runBeforeLlmCall(snapshot, messages, tools);
    expect(outMessages.map((message) => message.content[0])).toEqual([
      { type: "text", text: "hello" },
      { type: "text", text: "A" },
      { type: "text", text: "B" },
    ]);
    expect(outTools[0]?.description).toBe("Search.AB");

    expect((await runAfterLlmCall(snapshot, textResponse("x", "m"))).model).toBe("mAB");
    expect((await runBeforeToolExecution(snapshot, call)).input.query).toBe("  cats  AB");
    expect((await runAfterToolExecution(snapshot, result)).content).toBe("rawAB");
  });

  it("does not unwind response stages in reverse", async () => {
    const order: string[] = [];
    const recorder = (tag: string): MiddlewareLike => ({
      beforeLlmCall: async (input, schemas) => {
        order.push(`${tag}:beforeLlmCall`);
        return [input, schemas];
      },
      afterLlmCall: async (response) => {
        order.push(`${tag}:afterLlmCall`);
        return response;
      },
      beforeToolExecution: async (toolCall) => {
        order.push(`${tag}:beforeToolExecution`);
        return toolCall;
      },
      afterToolExecution: async (toolResult) => {
        order.push(`${tag}:afterToolExecution`);
        return toolResult;
      },
    });
    const snapshot = new MiddlewarePipeline([recorder("A"), recorder("B")]).snapshot();
    await runBeforeLlmCall(snapshot, messages, tools);
    await runAfterLlmCall(snapshot, textResponse("x"));
    await runBeforeToolExecution(snapshot, call);
    await runAfterToolExecution(snapshot, result);
    expect(order).toEqual([
      "A:beforeLlmCall",
      "B:beforeLlmCall",
      "A:afterLlmCall",
      "B:afterLlmCall",
      "A:beforeToolExecution",
      "B:beforeToolExecution",
      "A:afterToolExecution",
      "B:afterToolExecution",
    ]);
  });

  it("accepts plain objects with some of the stages", async () => {
    const pipeline = new MiddlewarePipeline();
    pipeline.add({
      beforeToolExecution: async (toolCall) => ({
        ...toolCall,
        input: { ...toolCall.input, query: String(toolCall.input.query).trim() },
      }),
    });
    const snapshot = pipeline.snapshot();
    expect(await runBeforeToolExecution(snapshot, call)).toEqual({
      id: "call-1",
      name: "search",
      input: { query: "cats" },
    });
    expect(await runAfterToolExecution(snapshot, result)).toBe(result);
  });

  it("takes middleware through its constructor, in order", async () => {
    const pipeline = new MiddlewarePipeline([new Tagging("1"), new Tagging("2")]);
    expect(pipeline.size).toBe(2);
    expect((await runAfterToolExecution(pipeline.snapshot(), result)).content).toBe("raw12");
  });

  it("refuses a value that is not an object", () => {
    const pipeline = new MiddlewarePipeline();
    expect(() => pipeline.add(null as unknown as MiddlewareLike)).toThrow(TypeError);
    expect(() => pipeline.add("middleware" as unknown as MiddlewareLike)).toThrow(TypeError);
    expect(pipeline.size).toBe(0);
  });

  it("lists per stage only the middleware that override it", () => {
    class OnlyCalls extends Middleware {
      override async beforeToolExecution(toolCall: ToolCall): Promise<ToolCall> {
        return toolCall;
      }
    }
    const onlyCalls = new OnlyCalls();
    const plain: MiddlewareLike = { afterLlmCall: async (response) => response };
    const base = new Middleware();
    const snapshot = new MiddlewarePipeline([base, onlyCalls, plain]).snapshot();
    expect(snapshot.beforeLlmCall).toEqual([]);
    expect(snapshot.afterLlmCall).toEqual([plain]);
    expect(snapshot.beforeToolExecution).toEqual([onlyCalls]);
    expect(snapshot.afterToolExecution).toEqual([]);
  });

  it("gives a frozen snapshot, the same one while the pipeline is unchanged", () => {
    const pipeline = new MiddlewarePipeline([new Tagging("A")]);
    const snapshot = pipeline.snapshot();
    expect(Object.isFrozen(snapshot)).toBe(true);
    expect(pipeline.snapshot()).toBe(snapshot);
    pipeline.add(new Tagging("B"));
    expect(pipeline.snapshot()).not.toBe(snapshot);
  });

  it("keeps a snapshot taken before a change unaffected by later add and close", async () => {
    const pipeline = new MiddlewarePipeline();
    const registrationA = pipeline.add(new Tagging("A"));
    const before = pipeline.snapshot();

    pipeline.add(new Tagging("B"));
    registrationA.close();
    const after = pipeline.snapshot();

    expect((await runAfterToolExecution(before, result)).content).toBe("rawA");
    expect((await runAfterToolExecution(after, result)).content).toBe("rawB");
    expect(before.afterToolExecution).toHaveLength(1);
  });
});

describe("pipeline Registration", () => {
  it("removes the middleware on close; a second close does nothing", async () => {
    const pipeline = new MiddlewarePipeline();
    const keep = new Tagging("K");
    pipeline.add(new Tagging("X"));
    const registration = pipeline.add(keep);
    pipeline.add(new Tagging("Y"));
    expect(registration).toBeInstanceOf(Registration);
    expect(registration.closed).toBe(false);

    registration.close();
    expect(registration.closed).toBe(true);
    expect(pipeline.size).toBe(2);
    expect((await runAfterToolExecution(pipeline.snapshot(), result)).content).toBe("rawXY");

    registration.close();
    expect(registration.closed).toBe(true);
    expect(pipeline.size).toBe(2);
  });

  it("closing one middleware's registration twice never removes another", () => {
    const pipeline = new MiddlewarePipeline();
    const first = pipeline.add(new Tagging("A"));
    const second = new Tagging("B");
    pipeline.add(second);
    first.close();
    first.close();
    expect(pipeline.snapshot().afterToolExecution).toEqual([second]);
  });

  it("removes the middleware through Symbol.dispose", () => {
    const pipeline = new MiddlewarePipeline();
    const registration = pipeline.add(new Tagging("A"));
    registration[Symbol.dispose]();
    expect(registration.closed).toBe(true);
    expect(pipeline.size).toBe(0);
  });

  it("removes the middleware at the end of a `using` block", () => {
    const pipeline = new MiddlewarePipeline();
    {
      using _registration = pipeline.add(new Tagging("scoped"));
      expect(pipeline.size).toBe(1);
    }
    expect(pipeline.size).toBe(0);
  });
});
