import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  ConfigError,
  Extension,
  type ExtensionContext,
  ExtensionError,
  type ExtensionLike,
  type ExtensionStateAddress,
  HookEvent,
  type MiddlewareLike,
  memoryExtensionStateStore,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { silent } from "../../support/silent.js";

/** Middleware that appends its name to `order` at afterLlmCall. */
const tracer = (name: string, order: string[]): MiddlewareLike => ({
  async afterLlmCall(response) {
    order.push(name);
    return response;
  },
});

/** An extension that adds one tracing middleware. */
const tracingExtension = (name: string, order: string[], priority?: number): ExtensionLike => ({
  name,
  ...(priority === undefined ? {} : { priority }),
  install: (ctx: ExtensionContext) => {
    ctx.addMiddleware(tracer(name, order));
  },
});

const echo = (name = "echo") =>
  tool({
    name,
    description: "Echoes its text.",
    input: z.object({ text: z.string() }),
    handler: async ({ text }) => text,
  });

const looping = () => new ScriptedProvider([textResponse("ok")], { loop: true });

const makeAgent = (options: AgentOptions) => new Agent({ logger: silent, ...options });

describe("extension ordering", () => {
  it("keeps earlier middleware first, then extensions in priority order, then later additions", async () => {
    const order: string[] = [];
    const agent = makeAgent({
      provider: looping(),
      middleware: [tracer("constructor", order)],
      extensions: [
        tracingExtension("late", order, 200),
        tracingExtension("first-of-two", order), // default priority 100
        tracingExtension("second-of-two", order, 100),
        tracingExtension("early", order, 10),
      ],
    });
    agent.middleware.add(tracer("added before start", order));
    await agent.start();
    agent.middleware.add(tracer("added after start", order));
    await agent.run("go");
    expect(order).toEqual([
      "constructor",
      "added before start",
      "early",
      "first-of-two",
      "second-of-two",
      "late",
      "added after start",
    ]);
    expect(agent.extensions.names).toEqual(["early", "first-of-two", "second-of-two", "late"]);

    order.length = 0;
    const reg = await agent.extensions.install(tracingExtension("installed later", order, 0));
    agent.middleware.add(tracer("after that", order));
    await agent.run("again");
    // Priority orders installation only: a priority-0 extension installed later still runs after.
    expect(order.slice(-3)).toEqual(["added after start", "installed later", "after that"]);
    await reg.close();
    await agent.close();
  });

  it("installs at the first run, since run() starts the agent", async () => {
    const order: string[] = [];
    const agent = makeAgent({
      provider: looping(),
      extensions: [tracingExtension("ext", order)],
    });
    expect(agent.extensions.names).toEqual([]);
    await agent.run("go");
    expect(agent.started).toBe(true);
    expect(order).toEqual(["ext"]);
    await agent.close();
  });

  it("installs once when runs start the agent concurrently", async () => {
    let installs = 0;
    const agent = makeAgent({
      provider: looping(),
      extensions: [
        {
          name: "counted",
          install: async () => {
            installs++;
          },
        },
      ],
    });
    await Promise.all([agent.run("a"), agent.run("b"), agent.start()]);
    expect(installs).toBe(1);
    await agent.close();
  });
});

class Everything extends Extension {
  name = "everything";
  cleanups = 0;
  seen: string[] = [];

  async install(ctx: ExtensionContext): Promise<void> {
    ctx.addMiddleware({
      afterToolExecution: async (result) => ({ ...result, content: `${result.content}!` }),
    });
    ctx.addHook(HookEvent.TOOL_CALL_END, (hook) => {
      this.seen.push(hook.data.toolCall.name);
    });
    ctx.addTool(echo());
    ctx.addPromptProvider(() => "Extension context.");
  }

  override async cleanup(): Promise<void> {
    this.cleanups++;
  }
}

const echoScript = () =>
  new ScriptedProvider(
    [toolCallResponse([{ name: "echo", input: { text: "hi" } }]), textResponse("done")],
    { loop: true },
  );

describe("install, uninstall and cleanup", () => {
  it("adds a tool, middleware, a hook and a prompt provider, and removes them all on close", async () => {
    const provider = echoScript();
    const agent = makeAgent({ provider });
    const extension = new Everything();
    const reg = await agent.extensions.install(extension);
    const result = await agent.run("go");
    const toolBlock = result.messages[2]?.content[0];
    expect(toolBlock).toMatchObject({ type: "tool_result", content: "hi!" });
    expect(extension.seen).toEqual(["echo"]);
    expect(provider.requests[0]?.system).toBe("Extension context.");
    expect(provider.requests[0]?.tools.map((each) => each.name)).toEqual(["echo"]);

    await reg.close();
    await reg.close(); // idempotent
    expect(reg.closed).toBe(true);
    expect(extension.cleanups).toBe(1);
    expect(agent.tools.has("echo")).toBe(false);
    expect(agent.middleware.size).toBe(0);
    expect(agent.hooks.has(HookEvent.TOOL_CALL_END)).toBe(false);
    expect(agent.extensions.names).toEqual([]);

    // Without the extension the model's echo call names an unknown tool.
    const after = await agent.run("go");
    expect(after.messages[2]?.content[0]).toMatchObject({ isError: true });
    expect(provider.requests.at(-1)?.system).toBe("");
    await agent.close();
    expect(extension.cleanups).toBe(1);
  });

  it("cleans up every extension once on agent.close(), the last installed first", async () => {
    const cleaned: string[] = [];
    const named = (name: string, priority: number): ExtensionLike => ({
      name,
      priority,
      install: () => {},
      cleanup: () => {
        cleaned.push(name);
      },
    });
    const agent = makeAgent({ provider: looping(), extensions: [named("b", 2), named("a", 1)] });
    await agent.start();
    await agent.extensions.install(named("c", 0));
    await agent.close();
    await agent.close();
    expect(cleaned).toEqual(["c", "b", "a"]);
    expect(agent.started).toBe(false);
    // Started again by the next run: the constructor's extensions are installed again.
    await agent.run("again");
    expect(agent.extensions.names).toEqual(["a", "b"]);
    await agent.close();
  });

  it("refuses a second extension of the same name", async () => {
    const agent = makeAgent({ provider: looping() });
    await agent.extensions.install({ name: "twice", install: () => {} });
    const failure = await agent.extensions
      .install({ name: "twice", install: () => {} })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExtensionError);
    expect(failure).toMatchObject({ code: "extension_failed", extension: "twice" });
    await agent.close();
  });

  it("logs a throwing cleanup and still removes everything", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    const agent = new Agent({ provider: looping(), logger });
    const reg = await agent.extensions.install({
      name: "messy",
      install: (ctx: ExtensionContext) => {
        ctx.addTool(echo());
      },
      cleanup: () => {
        throw new Error("cleanup broke");
      },
    });
    await reg.close();
    expect(agent.tools.has("echo")).toBe(false);
    expect(lines.some((line) => line.includes("extension cleanup threw"))).toBe(true);
  });
});

describe("a failing install", () => {
  const failing = (cleaned: string[]): ExtensionLike => ({
    name: "broken",
    priority: 2,
    install: async (ctx: ExtensionContext) => {
      ctx.addMiddleware(tracer("broken", []));
      ctx.addTool(echo("broken_tool"));
      ctx.addHook(HookEvent.AGENT_START, () => {});
      ctx.addPromptProvider(() => "never");
      throw new Error("no licence key");
    },
    cleanup: () => {
      cleaned.push("broken");
    },
  });
  const fine = (cleaned: string[]): ExtensionLike => ({
    name: "fine",
    priority: 1,
    install: (ctx: ExtensionContext) => {
      ctx.addTool(echo("fine_tool"));
    },
    cleanup: () => {
      cleaned.push("fine");
    },
  });

  it("fails start() with an ExtensionError and leaves nothing installed", async () => {
    const cleaned: string[] = [];
    const provider = looping();
    const agent = makeAgent({ provider, extensions: [failing(cleaned), fine(cleaned)] });
    const failure = await agent.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExtensionError);
    expect(failure).toMatchObject({
      name: "ExtensionError",
      code: "extension_failed",
      extension: "broken",
      message: 'Extension "broken" failed to install: no licence key',
    });
    expect(agent.started).toBe(false);
    expect(agent.extensions.names).toEqual([]);
    expect(agent.middleware.size).toBe(0);
    expect(agent.tools.size).toBe(0);
    expect(agent.hooks.has(HookEvent.AGENT_START)).toBe(false);
    // "fine" was installed first (priority 1) and is uninstalled again; both clean up.
    expect(cleaned).toEqual(["broken", "fine"]);

    // run() starts the agent, so it fails the same way, before calling the model.
    await expect(agent.run("go")).rejects.toBeInstanceOf(ExtensionError);
    expect(provider.callCount).toBe(0);
  });

  it("rejects agent.extensions.install() the same way", async () => {
    const cleaned: string[] = [];
    const agent = makeAgent({ provider: looping() });
    await expect(agent.extensions.install(failing(cleaned))).rejects.toThrow(
      'Extension "broken" failed to install: no licence key',
    );
    expect(agent.tools.size).toBe(0);
    expect(agent.middleware.size).toBe(0);
    expect(cleaned).toEqual(["broken"]);
  });

  it("refuses something that is not an extension with a ConfigError naming the path", async () => {
    const options = {
      provider: looping(),
      extensions: [{ name: "no-install" } as unknown as ExtensionLike],
    };
    expect(() => makeAgent(options)).toThrow(ConfigError);
    expect(() => makeAgent(options)).toThrow(
      "Invalid Agent options: extensions.0.install: must be a function",
    );
    const agent = makeAgent({ provider: looping() });
    const notAnExtension = { name: "x", priority: "high", install: () => {} };
    await expect(
      agent.extensions.install(notAnExtension as unknown as ExtensionLike),
    ).rejects.toThrow(/^The argument of extensions.install\(\) is not an extension: priority: /);
  });
});

describe("Agent options", () => {
  it("refuses an unknown option with a ConfigError naming it", () => {
    const options = { provider: looping(), extension: [] } as unknown as AgentOptions;
    expect(() => new Agent(options)).toThrow(ConfigError);
    expect(() => new Agent(options)).toThrow(/Unknown Agent option: extension \(known: provider/);
  });

  it("refuses extensions and a recorder of the wrong shape, naming the path", () => {
    expect(() => new Agent({ extensions: "audit" } as unknown as AgentOptions)).toThrow(
      /Invalid Agent options: extensions: /,
    );
    expect(() => new Agent({ recorder: {} } as unknown as AgentOptions)).toThrow(
      /Invalid Agent options: recorder.record: must be a function/,
    );
  });
});

class Counter extends Extension {
  name = "counter";
  prompts: string[] = [];

  async install(ctx: ExtensionContext): Promise<void> {
    const calls = ctx.state("counts", { calls: 0 });
    const seenByMiddleware = ctx.state("middleware", { runs: 0 });
    ctx.addTool(
      tool({
        name: "count",
        description: "Counts calls in this session.",
        input: z.object({}),
        handler: async () => {
          const current = await calls.get();
          await calls.set({ calls: current.calls + 1 });
          return `call number ${current.calls + 1}`;
        },
      }),
    );
    ctx.addMiddleware({
      beforeLlmCall: async (messages, tools) => {
        const seen = await seenByMiddleware.get();
        await seenByMiddleware.set({ runs: seen.runs + 1 });
        return [messages, tools];
      },
    });
    ctx.addPromptProvider(async () => `Calls so far: ${(await calls.get()).calls}`);
  }
}

const countScript = () =>
  new ScriptedProvider(
    [toolCallResponse([{ name: "count", input: {} }]), textResponse("counted")],
    { loop: true },
  );

describe("saved state", () => {
  it("persists per session across runs, and starts from the initial value in a new session", async () => {
    const provider = countScript();
    const agent = makeAgent({ provider, extensions: [new Counter()] });
    const first = await agent.run("count", { sessionId: "s1" });
    const second = await agent.run("count", { sessionId: "s1" });
    const other = await agent.run("count", { sessionId: "s2" });
    const toolText = (result: typeof first) =>
      result.messages.flatMap((message) =>
        message.content.flatMap((block) => (block.type === "tool_result" ? [block.content] : [])),
      );
    expect(toolText(first)).toEqual(["call number 1"]);
    expect(toolText(second)).toEqual(["call number 2"]);
    expect(toolText(other)).toEqual(["call number 1"]);
    // The prompt provider read the same state at the start of each request.
    expect(provider.requests.map((request) => request.system)).toEqual([
      "Calls so far: 0",
      "Calls so far: 1",
      "Calls so far: 1",
      "Calls so far: 2",
      "Calls so far: 0",
      "Calls so far: 1",
    ]);
    await agent.close();
  });

  it("keeps concurrent runs of different sessions apart, hooks around the run included", async () => {
    const starts: Record<string, number> = {};
    const agent = makeAgent({
      provider: countScript(),
      extensions: [
        new Counter(),
        {
          name: "visits",
          install: (ctx: ExtensionContext) => {
            const visits = ctx.state("visits", 0);
            ctx.addHook(HookEvent.AGENT_START, async (hook) => {
              const count = (await visits.get()) + 1;
              await visits.set(count);
              starts[`${hook.data.sessionId}#${count}`] = count;
            });
          },
        },
      ],
    });
    // get() then set() is not atomic: runs of one session are not run concurrently here.
    const wave = (sessions: string[]) =>
      Promise.all(sessions.map((sessionId) => agent.run("count", { sessionId })));
    const results = [...(await wave(["s1", "s2", "s3"])), ...(await wave(["s1", "s2"]))];
    expect(results.map((result) => result.status)).toEqual(Array(5).fill("completed"));
    expect(Object.keys(starts).sort()).toEqual(["s1#1", "s1#2", "s2#1", "s2#2", "s3#1"]);
    await agent.close();
  });

  it("is readable outside a run given the session, and refuses a read without one", async () => {
    let saved: ReturnType<ExtensionContext["state"]> | undefined;
    const agent = makeAgent({
      provider: countScript(),
      extensions: [
        new Counter(),
        {
          name: "reader",
          install: (ctx: ExtensionContext) => {
            saved = ctx.state("flag", { on: false });
          },
        },
      ],
    });
    await agent.start();
    const state = saved as NonNullable<typeof saved>;
    expect(await state.get("s9")).toEqual({ on: false });
    await state.set({ on: true }, "s9");
    expect(await state.get("s9")).toEqual({ on: true });
    expect(await state.get("s10")).toEqual({ on: false });
    await expect(state.get()).rejects.toThrow(
      'Saved state "flag" of extension "reader" was used outside a run: pass the session id.',
    );
    await agent.close();
  });

  it("lives in the store the agent is given, addressed by agent, extension, key and session", async () => {
    const inner = memoryExtensionStateStore();
    const writes: Array<{ address: ExtensionStateAddress; value: unknown }> = [];
    const agent = makeAgent({ provider: countScript(), config: { name: "support" } });
    agent.extensions.useStateStore({
      get: (address) => inner.get(address),
      set: async (address, value) => {
        writes.push({ address, value });
        await inner.set(address, value);
      },
    });
    await agent.extensions.install(new Counter());
    await agent.run("count", { sessionId: "s1" });
    expect(writes).toContainEqual({
      address: { agent: "support", extension: "counter", key: "counts", sessionId: "s1" },
      value: { calls: 1 },
    });
    await agent.close();
  });

  it("stores copies: changing a value read does not change what is saved", async () => {
    const store = memoryExtensionStateStore();
    const address = { agent: "a", extension: "e", key: "k", sessionId: "s" };
    const value = { list: [1] };
    await store.set(address, value);
    value.list.push(2);
    const read = (await store.get(address)) as { list: number[] };
    read.list.push(3);
    expect(await store.get(address)).toEqual({ list: [1] });
  });
});
