import { type Logger, pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  HOOK_PAYLOADS,
  type HookContext,
  HookEvent,
  type LLMRequestData,
  PermissionManager,
  type Provider,
  type ProviderResponse,
  type ToolResult,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";

const ALL_EVENTS = Object.values(HookEvent);

/** A clock that stands still until a test moves it. */
const manualClock = (start = 1_000) => {
  let time = start;
  return {
    now: () => time,
    advance: (ms: number) => {
      time += ms;
    },
  };
};

const makeAgent = (options: AgentOptions): Agent =>
  new Agent({ logger: pino({ level: "silent" }), ...options });

const search = tool({
  name: "search",
  description: "Return a fixture search result for the requested query.",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => `Results for ${query}`,
});

/** Observes every event of `agent` and keeps each context, in order. */
function recordHooks(agent: Agent): HookContext<HookEvent, Agent>[] {
  const seen: HookContext<HookEvent, Agent>[] = [];
  for (const event of ALL_EVENTS) {
    agent.hooks.on(event, (context) => {
      seen.push(context);
    });
  }
  return seen;
}

const dataOf = <E extends HookEvent>(
  seen: readonly HookContext<HookEvent, Agent>[],
  event: E,
): HookContext<E, Agent>["data"][] =>
  seen
    .filter((context): context is HookContext<E, Agent> => context.event === event)
    .map((context) => context.data);

/** A log sink that keeps pino's JSON lines. */
function captureLogs(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void raw.push(line) });
  return {
    logger,
    lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** One tool call, then a final answer; the provider moves the clock by 250 ms per call. */
function toolThenText(clock: ReturnType<typeof manualClock>): ScriptedProvider {
  return new ScriptedProvider([
    () => {
      clock.advance(250);
      return toolCallResponse([{ name: "search", input: { query: "x" }, id: "call_1" }]);
    },
    () => {
      clock.advance(250);
      return textResponse("answer");
    },
  ]);
}

describe("Agent hooks: the events of a run", () => {
  it("emits the principal sequence in order", async () => {
    const clock = manualClock();
    const agent = makeAgent({ provider: toolThenText(clock), tools: [search], deps: { clock } });
    const seen = recordHooks(agent);

    await agent.run("find x");

    expect(seen.map((context) => context.event)).toEqual([
      HookEvent.AGENT_START,
      HookEvent.LOOP_ITERATION_START,
      HookEvent.LLM_REQUEST,
      HookEvent.LLM_RESPONSE,
      HookEvent.TOOL_CALL_START,
      HookEvent.TOOL_CALL_END,
      HookEvent.LOOP_ITERATION_END,
      HookEvent.LOOP_ITERATION_START,
      HookEvent.LLM_REQUEST,
      HookEvent.LLM_RESPONSE,
      HookEvent.LOOP_ITERATION_END,
      HookEvent.AGENT_END,
    ]);
  });

  it("AGENT_START carries runId, sessionId and input", async () => {
    const agent = makeAgent({ provider: new ScriptedProvider([textResponse("hi")]) });
    const seen = recordHooks(agent);

    await agent.run("hello there", { runId: "run-1", sessionId: "session-1" });

    expect(dataOf(seen, HookEvent.AGENT_START)).toEqual([
      { runId: "run-1", sessionId: "session-1", input: "hello there" },
    ]);
  });

  it("LOOP_ITERATION_START and _END number the iterations", async () => {
    const clock = manualClock();
    const agent = makeAgent({ provider: toolThenText(clock), tools: [search], deps: { clock } });
    const seen = recordHooks(agent);

    await agent.run("find x", { runId: "run-1" });

    expect(dataOf(seen, HookEvent.LOOP_ITERATION_START)).toEqual([
      { runId: "run-1", iteration: 1 },
      { runId: "run-1", iteration: 2 },
    ]);
    expect(dataOf(seen, HookEvent.LOOP_ITERATION_END)).toEqual([
      { runId: "run-1", iteration: 1 },
      { runId: "run-1", iteration: 2 },
    ]);
  });

  it("LLM_REQUEST carries exactly the documented keys, as sent", async () => {
    const clock = manualClock();
    const provider = toolThenText(clock);
    const agent = makeAgent({
      provider,
      tools: [search],
      deps: { clock },
      config: {
        systemPrompt: "You are terse.",
        model: "test-model",
        maxTokens: 512,
        temperature: 0.2,
      },
    });
    const seen = recordHooks(agent);

    await agent.run("find x", { runId: "run-1" });

    const requests = dataOf(seen, HookEvent.LLM_REQUEST);
    expect(requests).toHaveLength(2);
    for (const data of requests) {
      expect(Object.keys(data).sort()).toEqual(
        [
          "runId",
          "system",
          "model",
          "maxTokens",
          "temperature",
          "stream",
          "messageCount",
          "toolCount",
          "prefixKey",
        ].sort(),
      );
    }
    const [first, second] = requests as [LLMRequestData, LLMRequestData];
    expect(first).toMatchObject({
      runId: "run-1",
      system: "You are terse.",
      model: "test-model",
      maxTokens: 512,
      temperature: 0.2,
      stream: false,
      messageCount: 1,
      toolCount: 1,
    });
    expect(second.messageCount).toBe(3);
    expect(first.prefixKey).toEqual(expect.any(String));
    expect(second.prefixKey).toBe(first.prefixKey);
    expect(provider.requests.map((request) => request.prefixKey)).toEqual([
      first.prefixKey,
      second.prefixKey,
    ]);
  });

  it("prefixKey changes when a prompt provider changes the system prompt between iterations", async () => {
    const clock = manualClock();
    const agent = makeAgent({
      provider: toolThenText(clock),
      tools: [search],
      deps: { clock },
      config: { systemPrompt: "Base." },
    });
    let turn = 0;
    agent.addPromptProvider(() => `Turn ${++turn}.`);
    const seen = recordHooks(agent);

    await agent.run("find x");

    const [first, second] = dataOf(seen, HookEvent.LLM_REQUEST) as [LLMRequestData, LLMRequestData];
    expect(first.system).toBe("Base.\n\nTurn 1.");
    expect(second.system).toBe("Base.\n\nTurn 2.");
    expect(first.prefixKey).toEqual(expect.any(String));
    expect(second.prefixKey).toEqual(expect.any(String));
    expect(second.prefixKey).not.toBe(first.prefixKey);
  });

  it("prefixKey is null when prompt caching is off", async () => {
    const clock = manualClock();
    const provider = toolThenText(clock);
    const agent = makeAgent({
      provider,
      tools: [search],
      deps: { clock },
      config: { promptCaching: false },
    });
    const seen = recordHooks(agent);

    await agent.run("find x");

    expect(dataOf(seen, HookEvent.LLM_REQUEST).map((data) => data.prefixKey)).toEqual([null, null]);
    expect(provider.requests.map((request) => request.prefixKey)).toEqual([null, null]);
  });

  it("LLM_RESPONSE carries the processed response and the duration from the injected clock", async () => {
    const clock = manualClock();
    const agent = makeAgent({ provider: toolThenText(clock), tools: [search], deps: { clock } });
    agent.middleware.add({
      afterLlmCall: async (response: ProviderResponse) => ({ ...response, model: "processed" }),
    });
    const seen = recordHooks(agent);

    await agent.run("find x", { runId: "run-1" });

    const responses = dataOf(seen, HookEvent.LLM_RESPONSE);
    expect(responses).toHaveLength(2);
    expect(responses[0]).toEqual({
      runId: "run-1",
      response: {
        ...toolCallResponse([{ name: "search", input: { query: "x" }, id: "call_1" }]),
        model: "processed",
      },
      durationMs: 250,
    });
    expect(responses[1]?.response).toEqual({ ...textResponse("answer"), model: "processed" });
    expect(responses[1]?.durationMs).toBe(250);
  });

  it("TOOL_CALL_START carries the call; TOOL_CALL_END the call and the processed result", async () => {
    const clock = manualClock();
    const agent = makeAgent({ provider: toolThenText(clock), tools: [search], deps: { clock } });
    agent.middleware.add({
      afterToolExecution: async (result: ToolResult) => ({
        ...result,
        content: `${result.content}!`,
      }),
    });
    const seen = recordHooks(agent);

    await agent.run("find x", { runId: "run-1" });

    const toolCall = { id: "call_1", name: "search", input: { query: "x" } };
    expect(dataOf(seen, HookEvent.TOOL_CALL_START)).toEqual([{ runId: "run-1", toolCall }]);
    expect(dataOf(seen, HookEvent.TOOL_CALL_END)).toEqual([
      {
        runId: "run-1",
        toolCall,
        result: { toolCallId: "call_1", content: "Results for x!", isError: false },
      },
    ]);
  });

  it("the shortcuts observe tool start, tool end and errors", async () => {
    const clock = manualClock();
    const agent = makeAgent({ provider: toolThenText(clock), tools: [search], deps: { clock } });
    const names: string[] = [];
    agent.hooks.beforeTool((context) => void names.push(`before ${context.data.toolCall.name}`));
    agent.hooks.afterTool((context) => void names.push(`after ${context.data.result.content}`));
    const registration = agent.hooks.onError(() => void names.push("error"));

    await agent.run("find x");

    expect(names).toEqual(["before search", "after Results for x"]);
    expect(registration.closed).toBe(false);
  });

  it("ERROR carries the error and its phase when a run fails, before AGENT_END", async () => {
    const provider: Provider = {
      name: "down",
      complete: async () => {
        throw new Error("service unavailable");
      },
    };
    const agent = makeAgent({ provider });
    const seen = recordHooks(agent);

    const result = await agent.run("go", { runId: "run-1" });

    const errors = dataOf(seen, HookEvent.ERROR);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      runId: "run-1",
      phase: "provider",
      error: { name: "ProviderError", phase: "provider" },
    });
    expect(errors[0]?.error.message).toContain("service unavailable");
    expect(errors[0]?.error).toEqual(result.error);
    const events = seen.map((context) => context.event);
    expect(events.indexOf(HookEvent.ERROR)).toBeLessThan(events.indexOf(HookEvent.AGENT_END));
  });

  it("AGENT_END fires once with the final RunResult, for completion, failure and cancellation", async () => {
    const cancelled = new AbortController();
    cancelled.abort();
    const cases: Array<[Agent, AbortSignal | undefined]> = [
      [makeAgent({ provider: new ScriptedProvider([textResponse("ok")]) }), undefined],
      [makeAgent({}), undefined],
      [makeAgent({ provider: new ScriptedProvider([textResponse("never")]) }), cancelled.signal],
    ];
    const statuses: string[] = [];
    for (const [agent, signal] of cases) {
      const seen = recordHooks(agent);
      const result = await agent.run("go", signal === undefined ? {} : { signal });
      expect(dataOf(seen, HookEvent.AGENT_END)).toEqual([{ result }]);
      statuses.push(result.status);
    }
    expect(statuses).toEqual(["completed", "failed", "cancelled"]);
  });

  it("AGENT_END does not fire for an approval wait", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "x" } }]),
    ]);
    const permissions = new PermissionManager({ rules: [{ tool: "search", decision: "ask" }] });
    const agent = makeAgent({ provider, tools: [search], permissions });
    const seen = recordHooks(agent);

    const result = await agent.run("go");

    expect(result.status).toBe("awaiting_approval");
    expect(dataOf(seen, HookEvent.AGENT_END)).toEqual([]);
    expect(dataOf(seen, HookEvent.TOOL_CALL_START)).toEqual([]);
  });
});

describe("Agent hooks: the context", () => {
  it("every payload parses with its HOOK_PAYLOADS schema, unchanged", async () => {
    const clock = manualClock();
    const agents = [
      makeAgent({ provider: toolThenText(clock), tools: [search], deps: { clock } }),
      makeAgent({}),
    ];
    const seen: HookContext<HookEvent, Agent>[] = [];
    for (const agent of agents) {
      const recorded = recordHooks(agent);
      await agent.run("find x");
      seen.push(...recorded);
    }

    expect(new Set(seen.map((context) => context.event)).size).toBeGreaterThanOrEqual(9);
    for (const context of seen) {
      const schema: z.ZodType = HOOK_PAYLOADS[context.event];
      const parsed = schema.safeParse(context.data);
      expect(parsed.error, `payload of ${context.event}`).toBeUndefined();
      expect(parsed.data).toEqual(context.data);
    }
  });

  it("ctx.agent is the agent and ctx.timestamp comes from the injected clock", async () => {
    const clock = manualClock(5_000);
    const agent = makeAgent({ provider: toolThenText(clock), tools: [search], deps: { clock } });
    const seen = recordHooks(agent);

    await agent.run("find x");

    for (const context of seen) expect(context.agent).toBe(agent);
    const stamps = seen.map((context) => [context.event, context.timestamp]);
    expect(stamps).toEqual([
      [HookEvent.AGENT_START, 5_000],
      [HookEvent.LOOP_ITERATION_START, 5_000],
      [HookEvent.LLM_REQUEST, 5_000],
      [HookEvent.LLM_RESPONSE, 5_250],
      [HookEvent.TOOL_CALL_START, 5_250],
      [HookEvent.TOOL_CALL_END, 5_250],
      [HookEvent.LOOP_ITERATION_END, 5_250],
      [HookEvent.LOOP_ITERATION_START, 5_250],
      [HookEvent.LLM_REQUEST, 5_250],
      [HookEvent.LLM_RESPONSE, 5_500],
      [HookEvent.LOOP_ITERATION_END, 5_500],
      [HookEvent.AGENT_END, 5_500],
    ]);
  });

  it("a throwing observer does not stop the run; the throw is logged at warn", async () => {
    const { logger, lines } = captureLogs();
    const clock = manualClock();
    const agent = new Agent({
      provider: toolThenText(clock),
      tools: [search],
      logger,
      deps: { clock },
    });
    const later: string[] = [];
    agent.hooks.on(HookEvent.TOOL_CALL_END, () => {
      throw new Error("observer broke");
    });
    agent.hooks.on(HookEvent.LLM_RESPONSE, async () => {
      throw new Error("async observer broke");
    });
    agent.hooks.on(
      HookEvent.TOOL_CALL_END,
      (context) => void later.push(context.data.result.content),
    );

    const result = await agent.run("find x", { runId: "run-1" });

    expect(result.status).toBe("completed");
    expect(result.output).toBe("answer");
    expect(later).toEqual(["Results for x"]);
    const warnings = lines().filter((line) => line.level === 40);
    const byEvent = (event: string) => warnings.filter((line) => line.event === event);
    expect(byEvent(HookEvent.TOOL_CALL_END)).toHaveLength(1);
    expect(byEvent(HookEvent.LLM_RESPONSE)).toHaveLength(2);
    expect(byEvent(HookEvent.TOOL_CALL_END)[0]).toMatchObject({
      runId: "run-1",
      err: { message: "observer broke" },
    });
    expect(byEvent(HookEvent.LLM_RESPONSE)[0]).toMatchObject({
      err: { message: "async observer broke" },
    });
  });
});
