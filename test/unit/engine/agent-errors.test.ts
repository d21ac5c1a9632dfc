import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  PermissionManager,
  type Provider,
  type ProviderResponse,
  type ToolCall,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { gate } from "../../support/gate.js";

const makeAgent = (options: AgentOptions): Agent =>
  new Agent({ logger: pino({ level: "silent" }), ...options });

const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });

/** Counts handler runs; the input is ignored. */
const countingTool = (counter: { runs: number }) =>
  tool({
    name: "search",
    description: "Counts its runs.",
    input: z.object({ query: z.string() }),
    handler: async () => {
      counter.runs += 1;
      return "ok";
    },
  });

describe("Agent.run: maxIterations", () => {
  it("fails with MaxIterationsError after exactly maxIterations provider calls", async () => {
    const counter = { runs: 0 };
    const provider = new ScriptedProvider(
      [toolCallResponse([{ name: "search", input: { query: "again" } }])],
      { loop: true },
    );
    const agent = makeAgent({
      provider,
      tools: [countingTool(counter)],
      config: { maxIterations: 3 },
    });

    const result = await agent.run("loop forever");

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("MaxIterationsError");
    expect(result.error?.message).toContain("3");
    expect(result.error?.phase).toBe("afterTool");
    expect(result.output).toBeNull();
    expect(provider.callCount).toBe(3);
    expect(result.iterations).toBe(3);
    expect(counter.runs).toBe(3);
  });

  it("completes when the model answers on the last allowed iteration", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "once" } }]),
      textResponse("done in time"),
    ]);
    const agent = makeAgent({
      provider,
      tools: [countingTool({ runs: 0 })],
      config: { maxIterations: 2 },
    });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(result.output).toBe("done in time");
    expect(provider.callCount).toBe(2);
  });
});

describe("Agent.run: cancellation through an AbortSignal", () => {
  it("aborting during a handler cancels the run and the handler sees the aborted signal", async () => {
    const controller = new AbortController();
    const started = gate();
    const signals: boolean[] = [];
    const wait = tool({
      name: "wait",
      description: "Waits until the run is cancelled.",
      input: z.object({}),
      handler: async (_input, context) => {
        started.open();
        await aborted(context.signal);
        signals.push(context.signal.aborted);
        return "too late";
      },
    });
    const provider = new ScriptedProvider([toolCallResponse([{ name: "wait", input: {} }])]);
    const agent = makeAgent({ provider, tools: [wait] });

    const running = agent.run("go", { signal: controller.signal });
    await started.opened;
    controller.abort();
    const result = await running;

    expect(result.status).toBe("cancelled");
    expect(result.error?.name).toBe("RunCancelledError");
    expect(result.output).toBeNull();
    expect(signals).toEqual([true]);
    expect(provider.callCount).toBe(1);
    provider.assertComplete();
  });

  it("a provider or handler that ignores its signal does not keep a cancelled run waiting", async () => {
    const never = new Promise<never>(() => {});
    const providerCalled = gate();
    const deaf: Provider = {
      name: "deaf",
      complete: async () => {
        providerCalled.open();
        return never;
      },
    };
    const duringProvider = new AbortController();
    const first = makeAgent({ provider: deaf }).run("go", { signal: duringProvider.signal });
    await providerCalled.opened;
    duringProvider.abort();
    expect((await first).status).toBe("cancelled");

    const handlerStarted = gate();
    const stuck = tool({
      name: "stuck",
      description: "Never returns, whatever its signal says.",
      input: z.object({}),
      handler: async () => {
        handlerStarted.open();
        return never;
      },
    });
    const provider = new ScriptedProvider([toolCallResponse([{ name: "stuck", input: {} }])]);
    const duringHandler = new AbortController();
    const second = makeAgent({ provider, tools: [stuck] }).run("go", {
      signal: duringHandler.signal,
    });
    await handlerStarted.opened;
    duringHandler.abort();
    const result = await second;
    expect(result.status).toBe("cancelled");
    expect(result.error?.name).toBe("RunCancelledError");
  });

  it("a signal aborted before the run cancels it without calling the provider", async () => {
    const controller = new AbortController();
    controller.abort();
    const provider = new ScriptedProvider([textResponse("never")]);
    const agent = makeAgent({ provider });

    const result = await agent.run("go", { signal: controller.signal });

    expect(result.status).toBe("cancelled");
    expect(result.error?.name).toBe("RunCancelledError");
    expect(provider.callCount).toBe(0);
  });

  it("aborting during the provider call cancels the run", async () => {
    const controller = new AbortController();
    const called = gate();
    const provider: Provider = {
      name: "hanging",
      complete: async (_request, options) => {
        called.open();
        const signal = options?.signal;
        if (signal === undefined) throw new Error("no signal given to the provider");
        await aborted(signal);
        throw signal.reason;
      },
    };
    const agent = makeAgent({ provider });

    const running = agent.run("go", { signal: controller.signal });
    await called.opened;
    controller.abort();
    const result = await running;

    expect(result.status).toBe("cancelled");
    expect(result.error?.name).toBe("RunCancelledError");
  });
});

describe("Agent.run: provider failures", () => {
  it("an agent without a provider fails at once with ProviderMissingError", async () => {
    const counter = { runs: 0 };
    const agent = makeAgent({ tools: [countingTool(counter)] });

    const result = await agent.run("anything");

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("ProviderMissingError");
    expect(result.error?.message).toContain("provider");
    expect(result.iterations).toBe(0);
    expect(result.output).toBeNull();
    expect(counter.runs).toBe(0);
  });

  it("a throwing provider fails the run with ProviderError", async () => {
    const provider: Provider = {
      name: "flaky",
      complete: async () => {
        throw new Error("rate limited");
      },
    };
    const agent = makeAgent({ provider });

    const result = await agent.run("go");

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("ProviderError");
    expect(result.error?.message).toContain("rate limited");
    expect(result.error?.phase).toBe("provider");
  });

  it("an error no harnessx error names fails the run with internal_error, not a store code", async () => {
    // A permission policy whose resolve throws a plain TypeError: nothing in the stage wraps it.
    class BrokenPermissions extends PermissionManager {
      override async resolve(): Promise<never> {
        throw new TypeError("Cannot read properties of undefined (reading 'rules')");
      }
    }
    const counter = { runs: 0 };
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "search", input: { query: "q" } }]),
      ]),
      tools: [countingTool(counter)],
      permissions: new BrokenPermissions(),
    });

    const result = await agent.run("go");

    expect(result.status).toBe("failed");
    expect(result.error).toEqual({
      name: "InternalError",
      code: "internal_error",
      message: "Cannot read properties of undefined (reading 'rules')",
      phase: "permission",
    });
    expect(counter.runs).toBe(0);
  });

  it("a malformed provider response fails the run with ProviderError naming the path", async () => {
    const malformed = {
      content: [{ type: "text", text: 42 }],
      toolCalls: [],
      stopReason: "end_turn",
      model: "sloppy",
    };
    const provider: Provider = {
      name: "sloppy",
      complete: async () => malformed as unknown as ProviderResponse,
    };
    const agent = makeAgent({ provider });

    const result = await agent.run("go");

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("ProviderError");
    expect(result.error?.message).toContain("content.0.text");
    expect(result.error?.message).toContain("usage");
    expect(result.error?.phase).toBe("provider");
  });
});

describe("Agent.run: middleware failures", () => {
  it("a middleware that changes the call id fails the run; the handler does not run", async () => {
    const counter = { runs: 0 };
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "x" }, id: "call_1" }]),
    ]);
    const agent = makeAgent({ provider, tools: [countingTool(counter)] });
    agent.middleware.add({
      beforeToolExecution: async (call: ToolCall) => ({ ...call, id: "call_forged" }),
    });

    const result = await agent.run("go");

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("MiddlewareContractError");
    expect(result.error?.message).toContain("call_forged");
    expect(counter.runs).toBe(0);
  });

  it("a response stage that returns nothing fails the run with MiddlewareContractError", async () => {
    const provider = new ScriptedProvider([textResponse("hello")]);
    const agent = makeAgent({ provider });
    agent.middleware.add({
      afterLlmCall: async () => undefined as unknown as ProviderResponse,
    });

    const result = await agent.run("go");

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("MiddlewareContractError");
    expect(result.output).toBeNull();
  });

  it("an exception in result middleware is not swallowed", async () => {
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "search", input: { query: "x" } }]),
    ]);
    const agent = makeAgent({ provider, tools: [countingTool({ runs: 0 })] });
    agent.middleware.add({
      afterToolExecution: async () => {
        throw new Error("cannot post-process");
      },
    });

    const result = await agent.run("go");

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("MiddlewareError");
    expect(result.error?.message).toContain("cannot post-process");
    expect(result.error?.phase).toBe("afterToolExecution");
  });
});
