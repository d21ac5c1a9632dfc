import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { emitHook } from "../../../src/hooks/registry.js";
import {
  type HookContext,
  HookEvent,
  HookRegistry,
  Registration,
  type ToolCall,
  type ToolResult,
} from "../../../src/index.js";
import { gate } from "../../support/gate.js";
import { silent } from "../../support/silent.js";

const agent = { name: "test-agent" };
const toolCall: ToolCall = { id: "call-1", name: "search", input: { query: "cats" } };
const result: ToolResult = { toolCallId: "call-1", content: "Results", isError: false };

const toolEnd = (): HookContext<typeof HookEvent.TOOL_CALL_END, typeof agent> => ({
  event: HookEvent.TOOL_CALL_END,
  agent,
  data: { runId: "run-1", toolCall, result },
  timestamp: 1_700_000_000_000,
});

/** A pino logger writing JSON lines into an array. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "debug" },
    {
      write(chunk: string) {
        lines.push(JSON.parse(chunk) as Record<string, unknown>);
      },
    },
  );
  return { logger, lines };
}

describe("HookRegistry registration", () => {
  it("on() adds an observer that a Registration removes", async () => {
    const hooks = new HookRegistry<typeof agent>();
    const seen: string[] = [];
    const registration = hooks.on(HookEvent.TOOL_CALL_END, (context) => {
      seen.push(context.data.result.content);
    });
    expect(registration).toBeInstanceOf(Registration);
    expect(hooks.has(HookEvent.TOOL_CALL_END)).toBe(true);

    await emitHook(hooks, toolEnd(), silent);
    registration.close();
    expect(registration.closed).toBe(true);
    expect(hooks.has(HookEvent.TOOL_CALL_END)).toBe(false);
    await emitHook(hooks, toolEnd(), silent);

    expect(seen).toEqual(["Results"]);
  });

  it.each([
    ["beforeTool", HookEvent.TOOL_CALL_START],
    ["afterTool", HookEvent.TOOL_CALL_END],
    ["onError", HookEvent.ERROR],
  ] as const)("%s() observes %s and returns a Registration", (method, event) => {
    const hooks = new HookRegistry();
    const observer = () => undefined;
    const registration = hooks[method](observer);
    expect(registration).toBeInstanceOf(Registration);
    expect(hooks.observers(event)).toEqual([observer]);
    for (const other of Object.values(HookEvent)) {
      if (other !== event) expect(hooks.has(other)).toBe(false);
    }
    registration.close();
    expect(hooks.observers(event)).toEqual([]);
  });

  it("removes only the closed observer; closing twice does nothing more", () => {
    const hooks = new HookRegistry();
    const first = () => "first";
    const second = () => "second";
    const third = () => "third";
    hooks.on(HookEvent.ERROR, first);
    const registration = hooks.on(HookEvent.ERROR, second);
    hooks.on(HookEvent.ERROR, third);
    registration.close();
    registration.close();
    expect(hooks.observers(HookEvent.ERROR)).toEqual([first, third]);
  });

  it("the same function added twice is removed once per registration", () => {
    const hooks = new HookRegistry();
    const observer = () => undefined;
    const one = hooks.on(HookEvent.ERROR, observer);
    hooks.on(HookEvent.ERROR, observer);
    one.close();
    expect(hooks.observers(HookEvent.ERROR)).toEqual([observer]);
  });

  it("Symbol.dispose removes the observer", () => {
    const hooks = new HookRegistry();
    hooks.on(HookEvent.AGENT_START, () => undefined)[Symbol.dispose]();
    expect(hooks.has(HookEvent.AGENT_START)).toBe(false);
  });

  it("refuses an observer that is not a function", () => {
    const hooks = new HookRegistry();
    expect(() => hooks.on(HookEvent.ERROR, "log" as unknown as () => void)).toThrow(TypeError);
    expect(hooks.has(HookEvent.ERROR)).toBe(false);
  });
});

describe("emitHook", () => {
  it("calls observers in registration order with the context", async () => {
    const hooks = new HookRegistry<typeof agent>();
    const calls: string[] = [];
    const contexts: unknown[] = [];
    hooks.on(HookEvent.TOOL_CALL_END, (context) => {
      calls.push("a");
      contexts.push(context);
    });
    hooks.afterTool(() => {
      calls.push("b");
    });
    hooks.on(HookEvent.TOOL_CALL_END, () => {
      calls.push("c");
    });
    hooks.on(HookEvent.TOOL_CALL_START, () => {
      calls.push("not this event");
    });
    const context = toolEnd();
    await emitHook(hooks, context, silent);
    expect(calls).toEqual(["a", "b", "c"]);
    expect(contexts).toEqual([context]);
  });

  it("awaits an async observer before calling the next one", async () => {
    const hooks = new HookRegistry();
    const calls: string[] = [];
    const { opened, open: release } = gate();
    hooks.on(HookEvent.TOOL_CALL_END, async () => {
      calls.push("slow:start");
      await opened;
      calls.push("slow:end");
    });
    hooks.on(HookEvent.TOOL_CALL_END, () => {
      calls.push("next");
    });

    let finished = false;
    const emitting = emitHook(hooks, toolEnd(), silent).then(() => {
      finished = true;
    });
    // Let the first observer start; the second must not run while it waits.
    await Promise.resolve();
    expect(calls).toEqual(["slow:start"]);
    expect(finished).toBe(false);

    release();
    await emitting;
    expect(calls).toEqual(["slow:start", "slow:end", "next"]);
    expect(finished).toBe(true);
  });

  it("logs a throwing observer at warn with the event name and continues", async () => {
    const hooks = new HookRegistry();
    const calls: string[] = [];
    hooks.on(HookEvent.TOOL_CALL_END, () => {
      throw new Error("observer broke");
    });
    hooks.on(HookEvent.TOOL_CALL_END, async () => {
      await Promise.resolve();
      throw new Error("async observer broke");
    });
    hooks.on(HookEvent.TOOL_CALL_END, () => {
      calls.push("after the failures");
    });
    const { logger, lines } = capturingLogger();

    await expect(emitHook(hooks, toolEnd(), logger)).resolves.toBeUndefined();

    expect(calls).toEqual(["after the failures"]);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.level).toBe(pino.levels.values.warn);
      expect(line.event).toBe(HookEvent.TOOL_CALL_END);
    }
    expect(lines.map((line) => (line.err as { message?: string } | undefined)?.message)).toEqual([
      "observer broke",
      "async observer broke",
    ]);
  });

  it("ignores observers' return values", async () => {
    const hooks = new HookRegistry();
    hooks.on(HookEvent.TOOL_CALL_END, () => ({ result: { content: "changed" } }));
    const context = toolEnd();
    const before = structuredClone(context.data);
    await emitHook(hooks, context, silent);
    expect(context.data).toEqual(before);
  });

  it("does nothing without observers and logs nothing", async () => {
    const { logger, lines } = capturingLogger();
    await expect(emitHook(new HookRegistry(), toolEnd(), logger)).resolves.toBeUndefined();
    expect(lines).toEqual([]);
  });

  it("uses the observers registered when it starts", async () => {
    const hooks = new HookRegistry();
    const calls: string[] = [];
    hooks.on(HookEvent.TOOL_CALL_END, () => {
      calls.push("first");
      hooks.on(HookEvent.TOOL_CALL_END, () => {
        calls.push("added during emit");
      });
    });
    await emitHook(hooks, toolEnd(), silent);
    expect(calls).toEqual(["first"]);
  });
});
