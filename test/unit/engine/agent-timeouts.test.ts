import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  type HookContext,
  type HookEvent,
  type Provider,
  type ProviderRequest,
  type ProviderStreamEvent,
  type RunEvent,
  type Timer,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { toolResults } from "../../support/messages.js";

const makeAgent = (options: AgentOptions): Agent =>
  new Agent({ logger: pino({ level: "silent" }), ...options });

/** Never answers and ignores its signal; records the signals it was given. */
const hangingTool = (signals: AbortSignal[], timeoutMs?: number) =>
  tool({
    name: "hangs",
    description: "Never answers.",
    input: z.object({}),
    handler: (_input, context) => {
      signals.push(context.signal);
      return new Promise(() => {});
    },
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });

const quickTool = tool({
  name: "quick",
  description: "Answers at once.",
  input: z.object({}),
  handler: () => "quick answer",
});

/** A provider whose calls never settle and ignore their signal; records the signals. */
class HangingProvider implements Provider {
  readonly name = "hanging";
  readonly signals: AbortSignal[] = [];

  complete(_request: ProviderRequest, options: { signal?: AbortSignal } = {}): Promise<never> {
    if (options.signal) this.signals.push(options.signal);
    return new Promise(() => {});
  }

  async *stream(
    _request: ProviderRequest,
    options: { signal?: AbortSignal } = {},
  ): AsyncIterable<ProviderStreamEvent> {
    if (options.signal) this.signals.push(options.signal);
    yield { type: "text_delta", text: "thinking about it" };
    await new Promise(() => {});
  }
}

describe("tool timeouts in a run", () => {
  it("a handler past its tool's timeoutMs gets an error result and the run goes on", async () => {
    const signals: AbortSignal[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "hangs", input: {}, id: "slow" },
        { name: "quick", input: {}, id: "fast" },
      ]),
      textResponse("carried on"),
    ]);
    const agent = makeAgent({ provider, tools: [hangingTool(signals, 50), quickTool] });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(result.output).toBe("carried on");
    expect(toolResults(result.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "slow",
        content: 'Tool "hangs" timed out after 50 ms.',
        isError: true,
      },
      { type: "tool_result", toolCallId: "fast", content: "quick answer", isError: false },
    ]);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
    provider.assertComplete();
  });

  it("uses config.toolTimeoutMs for a tool that sets none", async () => {
    const signals: AbortSignal[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "hangs", input: {} }]),
      textResponse("done"),
    ]);
    const agent = makeAgent({
      provider,
      tools: [hangingTool(signals)],
      config: { toolTimeoutMs: 40 },
    });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(toolResults(result.messages)[0]?.content).toBe('Tool "hangs" timed out after 40 ms.');
  });

  it("a tool's own timeoutMs wins over config.toolTimeoutMs", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "hangs", input: {} }]),
      textResponse("done"),
    ]);
    const agent = makeAgent({
      provider,
      tools: [hangingTool([], 30)],
      config: { toolTimeoutMs: 600_000 },
    });

    const result = await agent.run("go");

    expect(toolResults(result.messages)[0]?.content).toBe('Tool "hangs" timed out after 30 ms.');
  });

  it("reports the timeout to ERROR observers and result middleware sees the error result", async () => {
    const errors: HookContext<typeof HookEvent.ERROR>[] = [];
    const seenByMiddleware: string[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "hangs", input: {}, id: "call_9" }]),
      textResponse("done"),
    ]);
    const agent = makeAgent({
      provider,
      tools: [hangingTool([], 20)],
      middleware: [
        {
          afterToolExecution: async (result) => {
            seenByMiddleware.push(`${result.toolCallId}: ${result.content}`);
            return result;
          },
        },
      ],
    });
    agent.hooks.onError((context) => {
      errors.push(context);
    });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(seenByMiddleware).toEqual(['call_9: Tool "hangs" timed out after 20 ms.']);
    expect(errors.map((context) => context.data)).toEqual([
      {
        runId: result.runId,
        error: {
          name: "ToolTimeoutError",
          code: "tool_timeout",
          message: 'Tool "hangs" timed out after 20 ms.',
          phase: "dispatch",
        },
        phase: "dispatch",
      },
    ]);
  });

  it("uses an injected timer", async () => {
    const delays: number[] = [];
    // Fires the tool's deadline at once and never the provider's.
    const immediate: Timer = {
      schedule(callback, ms) {
        delays.push(ms);
        if (ms === 123_456) queueMicrotask(callback);
        return () => {};
      },
    };
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "hangs", input: {} }]),
      textResponse("done"),
    ]);
    const agent = makeAgent({
      provider,
      tools: [hangingTool([], 123_456)],
      deps: { timer: immediate },
    });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(toolResults(result.messages)[0]?.content).toBe(
      'Tool "hangs" timed out after 123456 ms.',
    );
    expect(delays).toContain(123_456);
    expect(delays).toContain(600_000);
  });
});

describe("provider timeouts", () => {
  it("a provider call past config.providerTimeoutMs fails the run with a timeout ProviderError", async () => {
    const provider = new HangingProvider();
    const agent = makeAgent({ provider, config: { providerTimeoutMs: 50 } });

    const result = await agent.run("hello");

    expect(result.status).toBe("failed");
    expect(result.error).toEqual({
      name: "ProviderError",
      code: "timeout",
      message: 'Provider "hanging" did not answer within 50 ms (config.providerTimeoutMs).',
      phase: "provider",
      retryable: true,
    });
    expect(provider.signals).toHaveLength(1);
    expect(provider.signals[0]?.aborted).toBe(true);
  });

  it("times a streamed provider call out too, and stops forwarding its deltas", async () => {
    const provider = new HangingProvider();
    const agent = makeAgent({ provider, config: { providerTimeoutMs: 50 } });
    const events: RunEvent[] = [];

    for await (const event of agent.runStream("hello")) events.push(event);

    const last = events.at(-1);
    expect(last?.type).toBe("result");
    if (last?.type !== "result") return;
    expect(last.result.status).toBe("failed");
    expect(last.result.error?.code).toBe("timeout");
    expect(events.filter((event) => event.type === "text_delta")).toEqual([
      { type: "text_delta", text: "thinking about it" },
    ]);
    expect(provider.signals[0]?.aborted).toBe(true);
  });

  it("a provider that answers in time is not affected", async () => {
    const provider = new ScriptedProvider([textResponse("in time")]);
    const agent = makeAgent({ provider, config: { providerTimeoutMs: 60_000 } });
    const result = await agent.run("hello");
    expect(result.status).toBe("completed");
    expect(result.output).toBe("in time");
  });
});
