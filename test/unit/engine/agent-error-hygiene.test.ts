import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  HookEvent,
  type Provider,
  type ProviderRequest,
  type ProviderStreamEvent,
  type RunResult,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";

const CANARY = "canary-5d1e-never-store-me";

/** What an HTTP SDK throws: a message, and the request with its headers and a secret. */
function sdkError(): Error {
  const config = { headers: { Authorization: `Bearer ${CANARY}` }, url: "https://api.example" };
  return Object.assign(new Error("Request failed with status code 401"), {
    config,
    canaryKey: CANARY,
    toJSON: () => ({ config, canaryKey: CANARY }),
  });
}

/** An agent whose log lines (every level) and hook payloads (every event) are captured. */
function observedAgent(options: AgentOptions) {
  const lines: string[] = [];
  const logger = pino({ level: "trace" }, { write: (chunk: string) => lines.push(chunk) });
  const payloads: string[] = [];
  const agent = new Agent({ logger, ...options });
  for (const event of Object.values(HookEvent)) {
    agent.hooks.on(event, (context) => {
      payloads.push(JSON.stringify({ event, data: context.data }));
    });
  }
  return { agent, lines, payloads };
}

function expectNoCanary(result: RunResult, lines: string[], payloads: string[]): void {
  expect(JSON.stringify(result)).not.toContain(CANARY);
  expect(lines.join("\n")).not.toContain(CANARY);
  expect(payloads.join("\n")).not.toContain(CANARY);
}

const search = (handler: () => unknown) =>
  tool({
    name: "search",
    description: "Search.",
    input: z.object({ query: z.string() }),
    handler,
  });

describe("a thrown SDK error never reaches results, logs or hooks", () => {
  it("from the provider: the run fails with its message and code, nothing else of it", async () => {
    const provider: Provider = {
      name: "leaky",
      complete: async () => {
        throw sdkError();
      },
    };
    const { agent, lines, payloads } = observedAgent({ provider });

    const result = await agent.run("hello");

    expect(result.status).toBe("failed");
    expect(result.error).toEqual({
      name: "ProviderError",
      code: "provider_failed",
      message: 'Provider "leaky" failed: Request failed with status code 401',
      phase: "provider",
      retryable: false,
    });
    expect(payloads.some((payload) => payload.includes('"code":"provider_failed"'))).toBe(true);
    expectNoCanary(result, lines, payloads);
  });

  it("from a streaming provider", async () => {
    const provider: Provider = {
      name: "leaky-stream",
      complete: async () => textResponse("unused"),
      // biome-ignore lint/correctness/useYield: it fails before its first event
      async *stream(): AsyncIterable<ProviderStreamEvent> {
        throw sdkError();
      },
    };
    const { agent, lines, payloads } = observedAgent({ provider });
    let result: RunResult | undefined;

    for await (const event of agent.runStream("hello")) {
      if (event.type === "result") result = event.result;
    }

    expect(result?.error?.code).toBe("provider_failed");
    if (result) expectNoCanary(result, lines, payloads);
  });

  it("from a tool handler: the call gets its message, the ERROR hook a ToolExecutionError, the log a debug line", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "x" } }]),
      textResponse("done"),
    ]);
    const { agent, lines, payloads } = observedAgent({
      provider,
      tools: [
        search(() => {
          throw sdkError();
        }),
      ],
    });

    const result = await agent.run("hello");

    expect(result.status).toBe("completed");
    expect(JSON.stringify(result.messages)).toContain("Request failed with status code 401");
    const errorPayloads = payloads
      .map((payload) => JSON.parse(payload) as { event: string })
      .filter((payload) => payload.event === HookEvent.ERROR);
    expect(errorPayloads).toHaveLength(1);
    expect(errorPayloads[0]).toMatchObject({
      data: {
        error: {
          name: "ToolExecutionError",
          code: "tool_failed",
          message: "Request failed with status code 401",
        },
      },
    });
    expect(lines.some((line) => line.includes("tool handler threw"))).toBe(true);
    expectNoCanary(result, lines, payloads);
  });

  it("from middleware: the run fails with a MiddlewareError", async () => {
    const provider = new ScriptedProvider([textResponse("fine")]);
    const { agent, lines, payloads } = observedAgent({
      provider,
      middleware: [
        {
          afterLlmCall: async () => {
            throw sdkError();
          },
        },
      ],
    });

    const result = await agent.run("hello");

    expect(result.error).toMatchObject({ name: "MiddlewareError", code: "middleware_failed" });
    expectNoCanary(result, lines, payloads);
  });

  it("from a hook observer: logged with its name, message and stack only", async () => {
    const provider = new ScriptedProvider([textResponse("fine")]);
    const { agent, lines, payloads } = observedAgent({ provider });
    agent.hooks.on(HookEvent.AGENT_END, () => {
      throw sdkError();
    });

    const result = await agent.run("hello");

    expect(result.status).toBe("completed");
    expect(lines.some((line) => line.includes("Request failed with status code 401"))).toBe(true);
    expectNoCanary(result, lines, payloads);
  });

  it("from a provider rejecting with a plain object", async () => {
    const provider: Provider = {
      name: "odd",
      complete: (_request: ProviderRequest) =>
        Promise.reject({ message: "rate limited", headers: { authorization: CANARY } }),
    };
    const { agent, lines, payloads } = observedAgent({ provider });

    const result = await agent.run("hello");

    expect(result.error?.message).toBe('Provider "odd" failed: rate limited');
    expectNoCanary(result, lines, payloads);
  });
});
