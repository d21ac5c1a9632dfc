import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  HookEvent,
  PermissionManager,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderStreamEvent,
  type RunEvent,
  type RunResult,
  type ToolCall,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { collect } from "../../support/collect.js";
import { gate } from "../../support/gate.js";

const makeAgent = (options: AgentOptions): Agent =>
  new Agent({ logger: pino({ level: "silent" }), ...options });

const textDeltas = (events: readonly RunEvent[]): string[] =>
  events.flatMap((event) => (event.type === "text_delta" ? [event.text] : []));

const finalResult = (events: readonly RunEvent[]): RunResult => {
  const last = events.at(-1);
  if (last?.type !== "result") throw new Error(`the last event is ${last?.type}, not result`);
  return last.result;
};

const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });

const search = tool({
  name: "search",
  description: "Return a fixture search result for the requested query.",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => `Results for ${query}`,
});

/** A streaming provider that yields `before`, waits for `release`, then yields `after`. */
function pausingProvider(release: Promise<void>): Provider {
  const response = textResponse("before after");
  return {
    name: "pausing",
    complete: async () => response,
    async *stream(): AsyncIterable<ProviderStreamEvent> {
      yield { type: "text_delta", text: "before " };
      await release;
      yield { type: "text_delta", text: "after" };
      yield { type: "response", response };
    },
  };
}

describe("Agent.runStream: text deltas", () => {
  it("passes the provider's deltas through as they are streamed", async () => {
    const provider = new ScriptedProvider([textResponse("Hello, streaming world!")], {
      chunkSize: 5,
    });
    const agent = makeAgent({ provider });

    const events = await collect(agent.runStream("hi"));

    expect(textDeltas(events)).toEqual(["Hello", ", str", "eamin", "g wor", "ld!"]);
    expect(provider.requests[0]?.stream).toBe(true);
    expect(finalResult(events)).toMatchObject({
      status: "completed",
      output: "Hello, streaming world!",
    });
  });

  it("delivers a delta before the provider has finished its response", async () => {
    const release = gate();
    const agent = makeAgent({ provider: pausingProvider(release.opened) });
    const received: string[] = [];

    for await (const event of agent.runStream("hi")) {
      if (event.type !== "text_delta") continue;
      received.push(event.text);
      // The provider is still waiting on the gate: this delta was not buffered.
      if (received.length === 1) release.open();
    }

    expect(received).toEqual(["before ", "after"]);
  });

  it("middleware that does not override afterLlmCall does not buffer", async () => {
    const provider = new ScriptedProvider([textResponse("abcdefgh")], { chunkSize: 3 });
    const agent = makeAgent({ provider });
    agent.middleware.add({ beforeToolExecution: async (call: ToolCall) => call });

    const events = await collect(agent.runStream("hi"));

    expect(textDeltas(events)).toEqual(["abc", "def", "gh"]);
  });

  it("an afterLlmCall that only observes still buffers: the text arrives once, whole", async () => {
    const provider = new ScriptedProvider([textResponse("buffered answer")], { chunkSize: 3 });
    const agent = makeAgent({ provider });
    const observed: string[] = [];
    agent.middleware.add({
      afterLlmCall: async (response: ProviderResponse) => {
        observed.push(response.model);
        return response;
      },
    });

    const events = await collect(agent.runStream("hi"));

    expect(observed).toEqual(["scripted"]);
    expect(textDeltas(events)).toEqual(["buffered answer"]);
  });

  it("an afterLlmCall that transforms emits the processed text, never the raw deltas", async () => {
    const provider = new ScriptedProvider([textResponse("quiet words")], { chunkSize: 2 });
    const agent = makeAgent({ provider });
    agent.middleware.add({
      afterLlmCall: async (response: ProviderResponse) => ({
        ...response,
        content: response.content.map((block) =>
          block.type === "text" ? { ...block, text: block.text.toUpperCase() } : block,
        ),
      }),
    });

    const events = await collect(agent.runStream("hi"));

    expect(textDeltas(events)).toEqual(["QUIET WORDS"]);
    expect(finalResult(events).output).toBe("QUIET WORDS");
  });

  it("streams a provider without `stream` as one delta per block", async () => {
    const requests: ProviderRequest[] = [];
    const provider: Provider = {
      name: "plain",
      complete: async (request) => {
        requests.push(request);
        return {
          ...textResponse(""),
          content: [
            { type: "thinking", text: "let me think" },
            { type: "text", text: "first part" },
            { type: "text", text: "second part" },
          ],
        };
      },
    };
    const agent = makeAgent({ provider });

    const events = await collect(agent.runStream("hi"));

    expect(events.slice(0, -1)).toEqual([
      { type: "thinking_delta", text: "let me think" },
      { type: "text_delta", text: "first part" },
      { type: "text_delta", text: "second part" },
    ]);
    expect(finalResult(events).output).toBe("first partsecond part");
    expect(requests).toHaveLength(1);
  });
});

describe("Agent.runStream: tool events and the result", () => {
  it("emits tool_start and tool_end around each call, and result last", async () => {
    const provider = new ScriptedProvider(
      [
        toolCallResponse([
          { name: "search", input: { query: "a" }, id: "call_a" },
          { name: "search", input: { query: "b" }, id: "call_b" },
        ]),
        textResponse("done"),
      ],
      { chunkSize: 100 },
    );
    const agent = makeAgent({ provider, tools: [search] });

    const events = await collect(agent.runStream("find a and b"));

    const callA = { id: "call_a", name: "search", input: { query: "a" } };
    const callB = { id: "call_b", name: "search", input: { query: "b" } };
    const starts = events.filter((event) => event.type === "tool_start");
    const ends = events.filter((event) => event.type === "tool_end");
    expect(starts).toEqual([
      { type: "tool_start", toolCall: callA },
      { type: "tool_start", toolCall: callB },
    ]);
    expect(ends).toEqual([
      {
        type: "tool_end",
        toolCall: callA,
        result: { toolCallId: "call_a", content: "Results for a", isError: false },
      },
      {
        type: "tool_end",
        toolCall: callB,
        result: { toolCallId: "call_b", content: "Results for b", isError: false },
      },
    ]);
    const types = events.map((event) => event.type);
    expect(types.lastIndexOf("tool_start")).toBeLessThan(types.indexOf("tool_end"));
    expect(types.slice(-2)).toEqual(["text_delta", "result"]);
    expect(types.filter((type) => type === "result")).toHaveLength(1);
    expect(finalResult(events)).toMatchObject({ status: "completed", output: "done" });
  });

  it("ends with the result when the run fails", async () => {
    const provider: Provider = {
      name: "down",
      complete: async () => {
        throw new Error("unavailable");
      },
    };
    const agent = makeAgent({ provider });

    const events = await collect(agent.runStream("hi"));

    expect(events).toHaveLength(1);
    expect(finalResult(events)).toMatchObject({
      status: "failed",
      error: { name: "ProviderError" },
    });
  });

  it("ends with the result after approval_required when a call waits for a person", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "x" }, id: "call_1" }]),
    ]);
    const permissions = new PermissionManager({ rules: [{ tool: "search", decision: "ask" }] });
    const agent = makeAgent({ provider, tools: [search], permissions });

    const events = await collect(agent.runStream("hi"));

    expect(events.map((event) => event.type)).toEqual(["approval_required", "result"]);
    expect(finalResult(events).status).toBe("awaiting_approval");
    expect(events[0]).toMatchObject({ pending: [{ toolCallId: "call_1", name: "search" }] });
  });
});

describe("Agent.runStream: stopping early", () => {
  it("breaking out during the provider stream cancels the run and aborts the provider", async () => {
    const seenAborted: boolean[] = [];
    const response = textResponse("never finished");
    const provider: Provider = {
      name: "endless",
      complete: async () => response,
      async *stream(_request, options): AsyncIterable<ProviderStreamEvent> {
        const signal = options?.signal;
        if (signal === undefined) throw new Error("no signal given to the provider");
        yield { type: "text_delta", text: "partial" };
        await aborted(signal);
        seenAborted.push(signal.aborted);
        yield { type: "response", response };
      },
    };
    const agent = makeAgent({ provider });
    const ends: RunResult[] = [];
    agent.hooks.on(HookEvent.AGENT_END, (context) => void ends.push(context.data.result));

    const received: RunEvent[] = [];
    for await (const event of agent.runStream("hi")) {
      received.push(event);
      if (event.type === "text_delta") break;
    }

    expect(received).toEqual([{ type: "text_delta", text: "partial" }]);
    expect(seenAborted).toEqual([true]);
    expect(ends.map((result) => result.status)).toEqual(["cancelled"]);
  });

  it("breaking out during a tool call cancels the run and aborts the handler's signal", async () => {
    const seenAborted: boolean[] = [];
    const wait = tool({
      name: "wait",
      description: "Waits until the run is cancelled.",
      input: z.object({}),
      handler: async (_input, context) => {
        await aborted(context.signal);
        seenAborted.push(context.signal.aborted);
        return "late";
      },
    });
    const provider = new ScriptedProvider([toolCallResponse([{ name: "wait", input: {} }])]);
    const agent = makeAgent({ provider, tools: [wait] });
    const ends: RunResult[] = [];
    agent.hooks.on(HookEvent.AGENT_END, (context) => void ends.push(context.data.result));

    for await (const event of agent.runStream("hi")) {
      if (event.type === "tool_start") break;
    }

    expect(seenAborted).toEqual([true]);
    expect(provider.callCount).toBe(1);
    expect(ends.map((result) => result.status)).toEqual(["cancelled"]);
  });

  it("an outer AbortSignal cancels a streamed run", async () => {
    const controller = new AbortController();
    const release = gate();
    const agent = makeAgent({ provider: pausingProvider(release.opened) });
    const events: RunEvent[] = [];

    for await (const event of agent.runStream("hi", { signal: controller.signal })) {
      events.push(event);
      if (event.type === "text_delta") {
        controller.abort();
        release.open();
      }
    }

    expect(finalResult(events).status).toBe("cancelled");
  });
});
