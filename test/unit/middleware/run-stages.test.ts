import { describe, expect, it } from "vitest";
import {
  ConfigError,
  type Message,
  Middleware,
  MiddlewareContractError,
  MiddlewareError,
  type MiddlewareLike,
  MiddlewarePipeline,
  type ProviderResponse,
  type ToolCall,
  type ToolResult,
  type ToolSchema,
} from "../../../src/index.js";
import type { PipelineSnapshot } from "../../../src/middleware/pipeline.js";
import {
  runAfterLlmCall,
  runAfterToolExecution,
  runBeforeLlmCall,
  runBeforeToolExecution,
} from "../../../src/middleware/run-stages.js";
import { textResponse, toolCallResponse } from "../../../src/testing.js";
import { harnessRejection } from "../../support/rejection.js";

const messages: Message[] = [
  { role: "user", content: [{ type: "text", text: "find cats" }] },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: "call-1", name: "search", input: { query: "cats" } }],
  },
];
const tools: ToolSchema[] = [
  { name: "search", description: "Search.", inputSchema: { type: "object", properties: {} } },
];
const call: ToolCall = { id: "call-1", name: "search", input: { query: "cats" } };
const result: ToolResult = { toolCallId: "call-1", content: "Results", isError: false };

const snapshotOf = (...middleware: MiddlewareLike[]): PipelineSnapshot =>
  new MiddlewarePipeline(middleware).snapshot();

/** A plain object whose stage returns whatever `value` is, bypassing the static types. */
const returning = (stage: keyof MiddlewareLike, value: unknown): MiddlewareLike =>
  ({ [stage]: async () => value }) as MiddlewareLike;

async function expectBreach(
  promise: Promise<unknown>,
  stage: string,
  pattern: RegExp,
): Promise<MiddlewareContractError> {
  const error = await harnessRejection(promise);
  expect(error).toBeInstanceOf(MiddlewareContractError);
  expect(error.code).toBe("middleware_contract");
  expect(error.name).toBe("MiddlewareContractError");
  expect(error.phase).toBe(stage);
  expect(error.message).toContain(stage);
  expect(error.message).toMatch(pattern);
  return error as MiddlewareContractError;
}

describe("runBeforeLlmCall", () => {
  it("passes the inputs through when no middleware overrides the stage", async () => {
    const [outMessages, outTools] = await runBeforeLlmCall(
      snapshotOf(new Middleware()),
      messages,
      tools,
    );
    expect(outMessages).toBe(messages);
    expect(outTools).toBe(tools);
  });

  it("accepts new, valid messages and tool schemas", async () => {
    const extra: Message = { role: "user", content: [{ type: "text", text: "be brief" }] };
    const [outMessages, outTools] = await runBeforeLlmCall(
      snapshotOf({
        beforeLlmCall: async (input, schemas) => [[...input, extra], schemas.slice(0, 0)],
      }),
      messages,
      tools,
    );
    expect(outMessages).toEqual([...messages, extra]);
    expect(outTools).toEqual([]);
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["an object", { messages, tools }],
    ["a one-element array", [messages]],
    ["a three-element array", [messages, tools, []]],
  ])("refuses %s: it is not a [messages, tools] pair", async (_label, value) => {
    await expectBreach(
      runBeforeLlmCall(snapshotOf(returning("beforeLlmCall", value)), messages, tools),
      "beforeLlmCall",
      /must return \[messages, tools\]/,
    );
  });

  it.each([
    ["messages not an array", [{ role: "user" }, tools]],
    ["tools not an array", [messages, "search"]],
  ])("refuses a pair with %s", async (_label, value) => {
    await expectBreach(
      runBeforeLlmCall(snapshotOf(returning("beforeLlmCall", value)), messages, tools),
      "beforeLlmCall",
      /two arrays/,
    );
  });

  it("refuses a new message of the wrong shape, naming its index", async () => {
    const error = await expectBreach(
      runBeforeLlmCall(
        snapshotOf({
          beforeLlmCall: async (input, schemas) => [
            [...input, { role: "system", content: "hi" } as unknown as Message],
            schemas,
          ],
        }),
        messages,
        tools,
      ),
      "beforeLlmCall",
      /invalid message at index 2/,
    );
    expect(error.message).toMatch(/role: /);
  });

  it("refuses a new tool schema of the wrong shape, naming its index", async () => {
    await expectBreach(
      runBeforeLlmCall(
        snapshotOf({
          beforeLlmCall: async (input, schemas) => [
            input,
            [...schemas, { name: "", description: "x" } as unknown as ToolSchema],
          ],
        }),
        messages,
        tools,
      ),
      "beforeLlmCall",
      /invalid tool schema at index 1/,
    );
  });

  it("does not re-validate messages and tools it returns unchanged", async () => {
    // Deliberately malformed inputs: only values a middleware created are checked.
    const odd = { role: "narrator", content: [] } as unknown as Message;
    const oddTools = [{ name: "" }] as unknown as ToolSchema[];
    const [outMessages, outTools] = await runBeforeLlmCall(
      snapshotOf({ beforeLlmCall: async (input, schemas) => [[...input].reverse(), schemas] }),
      [...messages, odd],
      oddTools,
    );
    expect(outMessages[0]).toBe(odd);
    expect(outTools).toBe(oddTools);
  });

  it("validates a copy of a message even when it equals the original", async () => {
    const odd = { role: "narrator", content: [] } as unknown as Message;
    await expectBreach(
      runBeforeLlmCall(
        snapshotOf({
          beforeLlmCall: async (input, schemas) => [
            input.map((message) => ({ ...message })),
            schemas,
          ],
        }),
        [odd],
        tools,
      ),
      "beforeLlmCall",
      /invalid message at index 0/,
    );
  });
});

describe("runAfterLlmCall", () => {
  it("chains new responses", async () => {
    const processed = await runAfterLlmCall(
      snapshotOf(
        {
          afterLlmCall: async (response) => ({
            ...response,
            content: [{ type: "text", text: "A" }],
          }),
        },
        { afterLlmCall: async (response) => ({ ...response, model: "changed" }) },
      ),
      textResponse("raw", "model"),
    );
    expect(processed.content).toEqual([{ type: "text", text: "A" }]);
    expect(processed.model).toBe("changed");
  });

  it("refuses a stage that returns nothing", async () => {
    await expectBreach(
      runAfterLlmCall(snapshotOf(returning("afterLlmCall", undefined)), textResponse("x")),
      "afterLlmCall",
      /invalid response/,
    );
  });

  it("refuses a response of the wrong shape, naming the path", async () => {
    const broken = { ...textResponse("x"), stopReason: "because" };
    const error = await expectBreach(
      runAfterLlmCall(snapshotOf(returning("afterLlmCall", broken)), textResponse("x")),
      "afterLlmCall",
      /invalid response/,
    );
    expect(error.message).toMatch(/stopReason: /);
  });

  it("does not validate a response returned unchanged", async () => {
    const odd = {
      ...toolCallResponse([{ name: "search", input: {} }]),
      model: 7,
    } as unknown as ProviderResponse;
    const processed = await runAfterLlmCall(
      snapshotOf({ afterLlmCall: async (response) => response }),
      odd,
    );
    expect(processed).toBe(odd);
  });
});

describe("runBeforeToolExecution", () => {
  it("accepts a renamed call that keeps its id", async () => {
    const renamed = await runBeforeToolExecution(
      snapshotOf({
        beforeToolExecution: async (toolCall) => ({ ...toolCall, name: "web_search" }),
      }),
      call,
    );
    expect(renamed).toEqual({ id: "call-1", name: "web_search", input: { query: "cats" } });
  });

  it("refuses a changed call id, naming both ids", async () => {
    const error = await expectBreach(
      runBeforeToolExecution(
        snapshotOf({ beforeToolExecution: async (toolCall) => ({ ...toolCall, id: "call-2" }) }),
        call,
      ),
      "beforeToolExecution",
      /call id/,
    );
    expect(error.message).toContain('"call-1"');
    expect(error.message).toContain('"call-2"');
  });

  it("names the middleware class in a breach", async () => {
    class Renumber extends Middleware {
      override async beforeToolExecution(toolCall: ToolCall): Promise<ToolCall> {
        return { ...toolCall, id: `${toolCall.id}-x` };
      }
    }
    const error = await expectBreach(
      runBeforeToolExecution(snapshotOf(new Renumber()), call),
      "beforeToolExecution",
      /call id/,
    );
    expect(error.message).toMatch(/^Renumber\.beforeToolExecution /);
  });

  it.each([
    ["nothing", undefined],
    ["a string", "search"],
    ["a call without input", { id: "call-1", name: "search" }],
    ["a call with an empty name", { id: "call-1", name: "", input: {} }],
    ["a call whose input is an array", { id: "call-1", name: "search", input: [] }],
  ])("refuses %s", async (_label, value) => {
    await expectBreach(
      runBeforeToolExecution(snapshotOf(returning("beforeToolExecution", value)), call),
      "beforeToolExecution",
      /invalid tool call/,
    );
  });

  it("does not run later middleware after a breach", async () => {
    let laterRan = false;
    await expectBreach(
      runBeforeToolExecution(
        snapshotOf(returning("beforeToolExecution", undefined), {
          beforeToolExecution: async (toolCall) => {
            laterRan = true;
            return toolCall;
          },
        }),
        call,
      ),
      "beforeToolExecution",
      /invalid tool call/,
    );
    expect(laterRan).toBe(false);
  });
});

describe("runAfterToolExecution", () => {
  it("accepts a result that keeps its toolCallId", async () => {
    const processed = await runAfterToolExecution(
      snapshotOf({
        afterToolExecution: async (toolResult) => ({
          ...toolResult,
          content: toolResult.content.replace("Results", "[redacted]"),
        }),
      }),
      result,
    );
    expect(processed).toEqual({ toolCallId: "call-1", content: "[redacted]", isError: false });
  });

  it("refuses a changed toolCallId, naming both ids", async () => {
    const error = await expectBreach(
      runAfterToolExecution(
        snapshotOf({
          afterToolExecution: async (toolResult) => ({ ...toolResult, toolCallId: "other" }),
        }),
        result,
      ),
      "afterToolExecution",
      /toolCallId/,
    );
    expect(error.message).toContain('"call-1"');
    expect(error.message).toContain('"other"');
  });

  it.each([
    ["nothing", undefined],
    ["a string", "Results"],
    ["isError as a string", { toolCallId: "call-1", content: "x", isError: "no" }],
    ["content missing", { toolCallId: "call-1", isError: false }],
  ])("refuses %s", async (_label, value) => {
    await expectBreach(
      runAfterToolExecution(snapshotOf(returning("afterToolExecution", value)), result),
      "afterToolExecution",
      /invalid tool result/,
    );
  });

  it("does not validate a result returned unchanged", async () => {
    const odd = { toolCallId: "call-1", content: 5, isError: false } as unknown as ToolResult;
    const processed = await runAfterToolExecution(
      snapshotOf({ afterToolExecution: async (toolResult) => toolResult }),
      odd,
    );
    expect(processed).toBe(odd);
  });
});

describe("a throwing stage", () => {
  class Exploding extends Middleware {
    override async beforeLlmCall(): Promise<[Message[], ToolSchema[]]> {
      throw new Error("boom in beforeLlmCall");
    }
    override async afterLlmCall(): Promise<ProviderResponse> {
      throw new Error("boom in afterLlmCall");
    }
    override async beforeToolExecution(): Promise<ToolCall> {
      throw new Error("boom in beforeToolExecution");
    }
    override async afterToolExecution(): Promise<ToolResult> {
      throw new Error("boom in afterToolExecution");
    }
  }

  const runs = {
    beforeLlmCall: (snapshot: PipelineSnapshot) => runBeforeLlmCall(snapshot, messages, tools),
    afterLlmCall: (snapshot: PipelineSnapshot) => runAfterLlmCall(snapshot, textResponse("x")),
    beforeToolExecution: (snapshot: PipelineSnapshot) => runBeforeToolExecution(snapshot, call),
    afterToolExecution: (snapshot: PipelineSnapshot) => runAfterToolExecution(snapshot, result),
  };

  it.each(Object.keys(runs) as (keyof typeof runs)[])(
    "%s becomes a MiddlewareError naming the class and the stage",
    async (stage) => {
      const error = await harnessRejection(runs[stage](snapshotOf(new Exploding())));
      expect(error).toBeInstanceOf(MiddlewareError);
      expect(error).not.toBeInstanceOf(MiddlewareContractError);
      expect(error.code).toBe("middleware_failed");
      expect(error.name).toBe("MiddlewareError");
      expect(error.phase).toBe(stage);
      expect(error.message).toBe(`Exploding.${stage} threw: boom in ${stage}`);
      // Rebuilt from the message alone: the thrown object is not kept.
      expect(error.cause).toBeUndefined();
      expect(error.toJSON()).toEqual({
        name: "MiddlewareError",
        code: "middleware_failed",
        message: error.message,
        phase: stage,
      });
    },
  );

  it("names a plain-object middleware as such", async () => {
    const error = await harnessRejection(
      runBeforeToolExecution(
        snapshotOf({
          beforeToolExecution: async () => {
            throw new Error("blank query");
          },
        }),
        call,
      ),
    );
    expect(error).toBeInstanceOf(MiddlewareError);
    expect(error.message).toBe("middleware object.beforeToolExecution threw: blank query");
  });

  it("wraps a thrown non-Error value", async () => {
    const error = await harnessRejection(
      runAfterToolExecution(
        snapshotOf({
          afterToolExecution: async () => {
            throw "just a string";
          },
        }),
        result,
      ),
    );
    expect(error).toBeInstanceOf(MiddlewareError);
    expect(error.message).toContain("just a string");
  });

  it("passes a thrown HarnessError through unchanged", async () => {
    const thrown = new ConfigError("bad setting");
    const error = await harnessRejection(
      runAfterLlmCall(
        snapshotOf({
          afterLlmCall: async () => {
            throw thrown;
          },
        }),
        textResponse("x"),
      ),
    );
    expect(error).toBe(thrown);
  });

  it("stops the stage: later middleware does not run", async () => {
    let laterRan = false;
    await harnessRejection(
      runAfterToolExecution(
        snapshotOf(new Exploding(), {
          afterToolExecution: async (toolResult) => {
            laterRan = true;
            return toolResult;
          },
        }),
        result,
      ),
    );
    expect(laterRan).toBe(false);
  });
});
