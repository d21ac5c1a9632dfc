import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  type ContentBlock,
  HookEvent,
  type Message,
  Middleware,
  MiddlewarePipeline,
  type ProviderResponse,
  type RunResult,
  type Tool,
  type ToolCall,
  type ToolResult,
  type ToolSchema,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { gate } from "../../support/gate.js";
import { silent } from "../../support/silent.js";

type ToolResultBlock = Extract<ContentBlock, { type: "tool_result" }>;

const makeAgent = (options: AgentOptions): Agent => new Agent({ logger: silent, ...options });

/** The fixture `search` tool of the seed; `seen` records each query its handler receives. */
const searchTool = (seen: string[] = []): Tool<{ query: string }> =>
  tool({
    name: "search",
    description: "Return a fixture search result for the requested query.",
    input: z.object({ query: z.string() }),
    handler: async ({ query }) => {
      seen.push(query);
      return `Results for ${query}`;
    },
  });

/** Every tool result the model was shown, in conversation order. */
const toolResults = (result: RunResult): ToolResultBlock[] =>
  result.messages
    .filter((message) => message.role === "tool")
    .flatMap((message) => message.content)
    .filter((block): block is ToolResultBlock => block.type === "tool_result");

const lastText = (messages: readonly Message[]): string => {
  const block = messages.at(-1)?.content.at(-1);
  if (block?.type === "tool_result") return block.content;
  return block?.type === "text" ? block.text : "";
};

const textOf = (response: ProviderResponse): string =>
  response.content.map((block) => (block.type === "text" ? block.text : "")).join("");

const userText = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

class NormalizeSearch extends Middleware {
  override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
    const query = call.input.query;
    if (call.name === "search" && typeof query === "string") {
      return { ...call, input: { ...call.input, query: query.trim() } };
    }
    return call;
  }
}

class RequireQuery extends Middleware {
  override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
    if (call.name === "search" && !String(call.input.query ?? "").trim()) {
      throw new Error("Search query must not be blank");
    }
    return call;
  }
}

class HideFixtureToken extends Middleware {
  override async afterToolExecution(result: ToolResult): Promise<ToolResult> {
    return { ...result, content: result.content.replaceAll("fixture-token", "[redacted]") };
  }
}

describe("Agent.run: the seed's middleware examples", () => {
  it("NormalizeSearch trims the query before validation and the handler sees it trimmed", async () => {
    const seen: string[] = [];
    const strictSearch = tool({
      name: "search",
      description: "Search with a query that must not start or end with spaces.",
      input: z.object({ query: z.string().regex(/^\S(.*\S)?$/) }),
      handler: async ({ query }) => {
        seen.push(query);
        return `Results for ${query}`;
      },
    });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "  harnessx  " }, id: "toolu_42" }]),
      textResponse("found it"),
    ]);
    const agent = makeAgent({ provider, tools: [strictSearch] });
    const registration = agent.middleware.add(new NormalizeSearch());

    const result = await agent.run("Find harnessx");

    expect(result.status).toBe("completed");
    expect(seen).toEqual(["harnessx"]);
    expect(toolResults(result)).toEqual([
      {
        type: "tool_result",
        toolCallId: "toolu_42",
        content: "Results for harnessx",
        isError: false,
      },
    ]);
    expect(registration.closed).toBe(false);
    provider.assertComplete();
  });

  it("preserves the tool call's id through middleware to the handler and the result", async () => {
    const ids: string[] = [];
    const search = tool({
      name: "search",
      description: "Search.",
      input: z.object({ query: z.string() }),
      handler: async ({ query }, context) => {
        ids.push(context.toolCallId);
        return query;
      },
    });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: " q " }, id: "toolu_abc" }]),
      textResponse("ok"),
    ]);
    const agent = makeAgent({ provider, tools: [search], middleware: [new NormalizeSearch()] });

    const result = await agent.run("go");

    expect(ids).toEqual(["toolu_abc"]);
    expect(result.messages[1]?.content).toEqual([
      { type: "tool_use", id: "toolu_abc", name: "search", input: { query: " q " } },
    ]);
    expect(toolResults(result).map((block) => block.toolCallId)).toEqual(["toolu_abc"]);
  });

  it("RequireQuery throwing fails the run with MiddlewareError; no handler runs, nothing is asked", async () => {
    const seen: string[] = [];
    const pipeline = new MiddlewarePipeline();
    pipeline.add(new RequireQuery());
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "   " } }]),
    ]);
    const agent = makeAgent({ provider, tools: [searchTool(seen)], middleware: pipeline });

    const result = await agent.run("Search for nothing");

    expect(agent.middleware).toBe(pipeline);
    expect(result.status).toBe("failed");
    expect(result.status).not.toBe("awaiting_approval");
    expect(result.pending).toEqual([]);
    expect(result.error?.name).toBe("MiddlewareError");
    expect(result.error?.message).toContain("Search query must not be blank");
    expect(result.output).toBeNull();
    expect(seen).toEqual([]);
    expect(agent.parkedRunIds()).toEqual([]);
  });

  it("HideFixtureToken redacts result content and keeps toolCallId and isError", async () => {
    const leaky = tool({
      name: "leaky",
      description: "Returns or throws text containing a token.",
      input: z.object({ fail: z.boolean() }),
      handler: async ({ fail }) => {
        if (fail) throw new Error("failed with fixture-token");
        return "value fixture-token and fixture-token";
      },
    });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "leaky", input: { fail: false }, id: "call_ok" },
        { name: "leaky", input: { fail: true }, id: "call_bad" },
      ]),
      textResponse("done"),
    ]);
    const agent = makeAgent({ provider, tools: [leaky] });
    agent.middleware.add(new HideFixtureToken());

    const result = await agent.run("go");

    expect(toolResults(result)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_ok",
        content: "value [redacted] and [redacted]",
        isError: false,
      },
      {
        type: "tool_result",
        toolCallId: "call_bad",
        content: "failed with [redacted]",
        isError: true,
      },
    ]);
    expect(JSON.stringify(provider.requests[1]?.messages)).not.toContain("fixture-token");
  });
});

/** Tags every value it passes on with its name and logs each stage it runs. */
class Tagger extends Middleware {
  constructor(
    readonly tag: string,
    readonly log: string[],
  ) {
    super();
  }

  override async beforeLlmCall(
    messages: Message[],
    tools: ToolSchema[],
  ): Promise<[Message[], ToolSchema[]]> {
    this.log.push(`${this.tag}.beforeLlmCall(${lastText(messages)})`);
    return [[...messages, userText(`from ${this.tag}`)], tools];
  }

  override async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
    this.log.push(`${this.tag}.afterLlmCall`);
    return {
      ...response,
      content: response.content.map((block) =>
        block.type === "text" ? { ...block, text: `${block.text}|${this.tag}` } : block,
      ),
    };
  }

  override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
    this.log.push(`${this.tag}.beforeToolExecution(${String(call.input.query)})`);
    return { ...call, input: { query: `${String(call.input.query)}|${this.tag}` } };
  }

  override async afterToolExecution(result: ToolResult): Promise<ToolResult> {
    this.log.push(`${this.tag}.afterToolExecution(${result.content})`);
    return { ...result, content: `${result.content}|${this.tag}` };
  }
}

describe("Agent.run: middleware order", () => {
  it("runs A then B at every stage, and B receives A's value", async () => {
    const log: string[] = [];
    const seen: string[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "x" } }], { text: "looking" }),
      textResponse("answer"),
    ]);
    const agent = makeAgent({ provider, tools: [searchTool(seen)] });
    agent.middleware.add(new Tagger("A", log));
    agent.middleware.add(new Tagger("B", log));

    const result = await agent.run("task");

    expect(log).toEqual([
      "A.beforeLlmCall(task)",
      "B.beforeLlmCall(from A)",
      "A.afterLlmCall",
      "B.afterLlmCall",
      "A.beforeToolExecution(x)",
      "B.beforeToolExecution(x|A)",
      "A.afterToolExecution(Results for x|A|B)",
      "B.afterToolExecution(Results for x|A|B|A)",
      "A.beforeLlmCall(Results for x|A|B|A|B)",
      "B.beforeLlmCall(from A)",
      "A.afterLlmCall",
      "B.afterLlmCall",
    ]);
    expect(seen).toEqual(["x|A|B"]);
    expect(lastText(provider.requests[0]?.messages ?? [])).toBe("from B");
    expect(provider.requests[0]?.messages.slice(-2).map((message) => lastText([message]))).toEqual([
      "from A",
      "from B",
    ]);
    expect(result.output).toBe("answer|A|B");
    expect(result.messages[1]?.content[0]).toEqual({ type: "text", text: "looking|A|B" });
  });

  it("middleware added from a hook during a run only affects the next run", async () => {
    const provider = new ScriptedProvider([textResponse("first"), textResponse("second")]);
    const agent = makeAgent({ provider });
    const late = {
      afterLlmCall: async (response: ProviderResponse) =>
        textResponse(`${textOf(response)} (late)`),
    };
    let added = false;
    agent.hooks.on(HookEvent.LLM_REQUEST, () => {
      if (added) return;
      added = true;
      agent.middleware.add(late);
    });

    const first = await agent.run("one");
    const second = await agent.run("two");

    expect(added).toBe(true);
    expect(first.output).toBe("first");
    expect(second.output).toBe("second (late)");
  });

  it("middleware added or removed by a handler during a run only affects the next run", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "mutate", input: {} }]),
      textResponse("done"),
      toolCallResponse([{ name: "mutate", input: {} }]),
      textResponse("done"),
    ]);
    const tagLate = {
      afterToolExecution: async (result: ToolResult) => ({
        ...result,
        content: `${result.content} [late]`,
      }),
    };
    const removed = new HideFixtureToken();
    let calls = 0;
    const mutate = tool({
      name: "mutate",
      description: "Changes the agent's middleware while running.",
      input: z.object({}),
      handler: async () => {
        calls += 1;
        if (calls === 1) {
          agent.middleware.add(tagLate);
          registration.close();
        }
        return "fixture-token";
      },
    });
    const agent = makeAgent({ provider, tools: [mutate] });
    const registration = agent.middleware.add(removed);

    const first = await agent.run("one");
    const second = await agent.run("two");

    expect(toolResults(first).map((block) => block.content)).toEqual(["[redacted]"]);
    expect(toolResults(second).map((block) => block.content)).toEqual(["fixture-token [late]"]);
  });
});

describe("Agent.run: what middleware can and cannot change", () => {
  it("beforeLlmCall never sees the system prompt, model or settings", async () => {
    const seen: string[] = [];
    const provider = new ScriptedProvider([textResponse("ok")]);
    const agent = makeAgent({
      provider,
      tools: [searchTool()],
      config: { systemPrompt: "SYSTEM-PROMPT-MARKER", model: "MODEL-MARKER", maxTokens: 777 },
    });
    agent.addPromptProvider(() => "DYNAMIC-CONTEXT-MARKER");
    agent.middleware.add({
      beforeLlmCall: async (messages: Message[], tools: ToolSchema[]) => {
        seen.push(JSON.stringify([messages, tools]));
        for (const message of messages) seen.push(message.role);
        return [messages, tools];
      },
    });

    await agent.run("hello");

    expect(provider.requests[0]?.system).toBe("SYSTEM-PROMPT-MARKER\n\nDYNAMIC-CONTEXT-MARKER");
    expect(seen[0]).toContain("hello");
    expect(seen[0]).toContain("search");
    expect(seen[0]).not.toContain("SYSTEM-PROMPT-MARKER");
    expect(seen[0]).not.toContain("DYNAMIC-CONTEXT-MARKER");
    expect(seen[0]).not.toContain("MODEL-MARKER");
    expect(seen[0]).not.toContain("777");
    expect(seen.slice(1)).toEqual(["user"]);
  });

  it("a tool schema added in beforeLlmCall is sent to the model but registers no handler", async () => {
    const ghost: ToolSchema = {
      name: "ghost",
      description: "Exists only in the schemas sent to the model.",
      inputSchema: { type: "object", properties: {} },
    };
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "ghost", input: {}, id: "call_ghost" }]),
      textResponse("ok"),
    ]);
    const agent = makeAgent({ provider, tools: [searchTool()] });
    agent.middleware.add({
      beforeLlmCall: async (messages: Message[], tools: ToolSchema[]) => [
        messages,
        [...tools, ghost],
      ],
    });

    const result = await agent.run("call the ghost");

    expect(provider.requests[0]?.tools.map((schema) => schema.name)).toEqual(["search", "ghost"]);
    expect(agent.tools.has("ghost")).toBe(false);
    const [block] = toolResults(result);
    expect(block?.toolCallId).toBe("call_ghost");
    expect(block?.isError).toBe(true);
    expect(block?.content).toContain('Unknown tool "ghost"');
  });

  it("renaming a call in beforeToolExecution to a registered tool runs that tool", async () => {
    const seen: string[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "find", input: { query: "renamed" }, id: "call_find" }]),
      textResponse("ok"),
    ]);
    const agent = makeAgent({ provider, tools: [searchTool(seen)] });
    agent.middleware.add({
      beforeToolExecution: async (call: ToolCall) =>
        call.name === "find" ? { ...call, name: "search" } : call,
    });

    const result = await agent.run("go");

    expect(seen).toEqual(["renamed"]);
    expect(toolResults(result)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_find",
        content: "Results for renamed",
        isError: false,
      },
    ]);
  });

  it("renaming a call to an unregistered name gives an error result and runs nothing", async () => {
    const seen: string[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "q" }, id: "call_1" }]),
      textResponse("ok"),
    ]);
    const agent = makeAgent({ provider, tools: [searchTool(seen)] });
    agent.middleware.add({
      beforeToolExecution: async (call: ToolCall) => ({ ...call, name: "vanished" }),
    });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(seen).toEqual([]);
    const [block] = toolResults(result);
    expect(block?.isError).toBe(true);
    expect(block?.toolCallId).toBe("call_1");
    expect(block?.content).toContain('Unknown tool "vanished"');
  });
});

describe("Agent.run: tool execution", () => {
  const strictSearch = (seen: string[]) =>
    tool({
      name: "search",
      description: "Search with a required, non-blank query.",
      input: z.object({ query: z.string().min(1) }),
      handler: async ({ query }) => {
        seen.push(query);
        return `Results for ${query}`;
      },
    });

  it("invalid input gives an error result naming the path; no handler, no afterToolExecution", async () => {
    const seen: string[] = [];
    const processed: string[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "search", input: { query: 42 }, id: "call_type" },
        { name: "search", input: { query: "" }, id: "call_blank" },
        { name: "search", input: {}, id: "call_missing" },
        { name: "search", input: { query: "fine" }, id: "call_valid" },
      ]),
      textResponse("ok"),
    ]);
    const agent = makeAgent({ provider, tools: [strictSearch(seen)] });
    agent.middleware.add({
      afterToolExecution: async (result: ToolResult) => {
        processed.push(result.toolCallId);
        return result;
      },
    });

    const result = await agent.run("go");

    expect(seen).toEqual(["fine"]);
    expect(processed).toEqual(["call_valid"]);
    const blocks = toolResults(result);
    expect(blocks.map((block) => [block.toolCallId, block.isError])).toEqual([
      ["call_type", true],
      ["call_blank", true],
      ["call_missing", true],
      ["call_valid", false],
    ]);
    for (const block of blocks.slice(0, 3)) {
      expect(block.content).toContain('Invalid input for tool "search"');
      expect(block.content).toContain("query:");
    }
  });

  it("an unknown tool gives an error result the model sees", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "teleport", input: { to: "mars" }, id: "call_x" }]),
      textResponse("ok"),
    ]);
    const agent = makeAgent({ provider, tools: [searchTool()] });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(toolResults(result)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_x",
        content: 'Unknown tool "teleport".',
        isError: true,
      },
    ]);
    expect(provider.requests[1]?.messages.at(-1)?.role).toBe("tool");
  });

  it("a throwing handler becomes an error result that passes through afterToolExecution", async () => {
    const broken = tool({
      name: "broken",
      description: "Always fails.",
      input: z.object({}),
      handler: async () => {
        throw new Error("disk on fire");
      },
    });
    const processed: ToolResult[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "broken", input: {}, id: "call_b" }]),
      textResponse("sorry"),
    ]);
    const agent = makeAgent({ provider, tools: [broken] });
    agent.middleware.add({
      afterToolExecution: async (result: ToolResult) => {
        processed.push(result);
        return { ...result, content: `${result.content} (processed)` };
      },
    });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(processed).toEqual([{ toolCallId: "call_b", content: "disk on fire", isError: true }]);
    expect(toolResults(result)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_b",
        content: "disk on fire (processed)",
        isError: true,
      },
    ]);
  });

  it("a non-string handler return value is JSON-stringified", async () => {
    const stats = tool({
      name: "stats",
      description: "Returns structured data.",
      input: z.object({}),
      handler: async () => ({ count: 2, tags: ["a", "b"], nested: { ok: true } }),
    });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "stats", input: {} }]),
      textResponse("ok"),
    ]);
    const agent = makeAgent({ provider, tools: [stats] });

    const result = await agent.run("go");

    const [block] = toolResults(result);
    expect(block?.content).toBe('{"count":2,"tags":["a","b"],"nested":{"ok":true}}');
    expect(JSON.parse(block?.content ?? "")).toEqual({
      count: 2,
      tags: ["a", "b"],
      nested: { ok: true },
    });
  });

  it("results of several calls keep the model's call order even when handlers finish in reverse", async () => {
    const finished: string[] = [];
    const secondDone = gate();
    const step = tool({
      name: "step",
      description: "The first call waits until the second has finished.",
      input: z.object({ label: z.string() }),
      handler: async ({ label }) => {
        if (label === "first") await secondDone.opened;
        finished.push(label);
        if (label === "second") secondDone.open();
        return `done ${label}`;
      },
    });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "step", input: { label: "first" }, id: "call_1" },
        { name: "step", input: { label: "second" }, id: "call_2" },
      ]),
      textResponse("ok"),
    ]);
    const agent = makeAgent({ provider, tools: [step] });

    const result = await agent.run("go");

    expect(finished).toEqual(["second", "first"]);
    const toolMessages = result.messages.filter((message) => message.role === "tool");
    expect(toolMessages).toHaveLength(1);
    expect(toolMessages[0]?.content).toEqual([
      { type: "tool_result", toolCallId: "call_1", content: "done first", isError: false },
      { type: "tool_result", toolCallId: "call_2", content: "done second", isError: false },
    ]);
  });
});

describe("Agent.run: the RunResult", () => {
  it("sums usage, counts iterations and keeps every message", async () => {
    const first: ProviderResponse = {
      ...toolCallResponse([{ name: "search", input: { query: "x" }, id: "call_1" }]),
      usage: { inputTokens: 11, outputTokens: 3, cacheReadTokens: 2, cacheWriteTokens: 5 },
    };
    const second: ProviderResponse = {
      ...textResponse("final answer"),
      usage: { inputTokens: 20, outputTokens: 7, cacheReadTokens: 9, cacheWriteTokens: 0 },
    };
    const provider = new ScriptedProvider([first, second]);
    const agent = makeAgent({ provider, tools: [searchTool()] });

    const result = await agent.run("the task", { sessionId: "session-7", runId: "run-7" });

    expect(result).toEqual({
      runId: "run-7",
      sessionId: "session-7",
      status: "completed",
      output: "final answer",
      error: null,
      stopReason: "end_turn",
      agent: "agent",
      pending: [],
      usage: { inputTokens: 31, outputTokens: 10, cacheReadTokens: 11, cacheWriteTokens: 5 },
      iterations: 2,
      messages: [
        userText("the task"),
        { role: "assistant", content: first.content },
        {
          role: "tool",
          content: [
            { type: "tool_result", toolCallId: "call_1", content: "Results for x", isError: false },
          ],
        },
        { role: "assistant", content: second.content },
      ],
    });
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  it("accepts messages as input and generates ids with the injected generator", async () => {
    let next = 0;
    const provider = new ScriptedProvider([textResponse("hi")]);
    const agent = makeAgent({ provider, deps: { generateId: () => `id-${++next}` } });
    const input: Message[] = [
      userText("earlier"),
      { role: "assistant", content: [{ type: "text", text: "noted" }] },
      userText("now"),
    ];

    const result = await agent.run(input);

    expect(result.runId).toBe("id-1");
    expect(result.sessionId).toBe("id-2");
    expect(result.iterations).toBe(1);
    expect(result.messages).toEqual([
      ...input,
      { role: "assistant", content: textResponse("hi").content },
    ]);
    expect(provider.requests[0]?.messages).toEqual(input);
  });
});

describe("Agent.run: context trimming", () => {
  const isPaired = (messages: readonly Message[]): boolean =>
    messages.every((message, index) => {
      if (message.role !== "tool") return true;
      const previous = messages[index - 1];
      if (previous?.role !== "assistant") return false;
      const requested = new Set(
        previous.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : [])),
      );
      return message.content.every(
        (block) => block.type !== "tool_result" || requested.has(block.toolCallId),
      );
    });

  it("trims what the provider sees, keeps everything in the result, never orphans a tool message", async () => {
    const bulky = tool({
      name: "bulky",
      description: "Returns a long text.",
      input: z.object({ page: z.number() }),
      handler: async ({ page }) => `page ${page}: ${"x".repeat(200)}`,
    });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "bulky", input: { page: 1 }, id: "call_1" }]),
      toolCallResponse([{ name: "bulky", input: { page: 2 }, id: "call_2" }]),
      toolCallResponse([{ name: "bulky", input: { page: 3 }, id: "call_3" }]),
      textResponse("read everything"),
    ]);
    const agent = makeAgent({ provider, tools: [bulky], config: { contextWindow: 80 } });

    const result = await agent.run("read the pages");

    expect(result.status).toBe("completed");
    expect(result.messages).toHaveLength(8);
    expect(toolResults(result).map((block) => block.toolCallId)).toEqual([
      "call_1",
      "call_2",
      "call_3",
    ]);
    const sent = provider.requests.map((request) => request.messages);
    expect(sent).toHaveLength(4);
    // Untrimmed, the request of iteration n would carry 1 + 2(n - 1) messages: 1, 3, 5, 7.
    expect(sent.map((messages) => messages.length)).toEqual([1, 3, 3, 3]);
    for (const messages of sent) {
      expect(messages[0]).toEqual(userText("read the pages"));
      expect(isPaired(messages)).toBe(true);
      expect(messages.at(-1)?.role).toBe(messages.length === 1 ? "user" : "tool");
    }
    const lastRequest = sent[3]!;
    expect(lastRequest.at(-1)?.content[0]).toMatchObject({ toolCallId: "call_3" });
  });
});
