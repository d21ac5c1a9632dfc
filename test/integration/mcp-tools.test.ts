import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Agent,
  type AgentOptions,
  AgentRuntime,
  HookEvent,
  McpServerError,
  type McpTools,
  Middleware,
  mcpTools,
  memoryBackend,
  PermissionManager,
  type ToolCall,
  ToolRegistry,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { fixtureArgs } from "../support/fixture-command.js";
import {
  EVERYTHING_SERVER,
  everythingOverHttp,
  everythingOverStdio,
  killChild,
  MEMORY_SERVER,
} from "../support/mcp-servers.js";
import { toolResults } from "../support/messages.js";
import { silent } from "../support/silent.js";

// Each test starts real server processes; a busy 2-core machine makes that slow, never wrong.
const SLOW = { timeout: 60_000 };
const makeAgent = (options: AgentOptions) => new Agent({ logger: silent, ...options });
const names = (mcp: McpTools) => mcp.tools.map((each) => each.name);

describe("mcpTools over stdio (server-everything)", SLOW, () => {
  let mcp: McpTools;
  beforeAll(async () => {
    mcp = await mcpTools(everythingOverStdio());
  });
  afterAll(async () => {
    await mcp.close();
  });

  it("lists the server's tools as harnessx tools with the server's schemas", () => {
    expect(mcp.server?.name).toBe("mcp-servers/everything");
    expect(mcp.skipped).toEqual([]);
    expect(names(mcp)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image"]));
    const echo = mcp.tools.find((each) => each.name === "echo");
    expect(echo?.description).toMatch(/echo/i);
    expect(echo?.inputSchema).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    });
    expect(echo?.inputSchema).not.toHaveProperty("$schema");
    // Retried after a crash only where the server marks the tool read-only or idempotent.
    expect(echo?.recovery).toBe("retry");
    expect(mcp.tools.find((each) => each.name === "toggle-simulated-logging")?.recovery).toBe(
      "fail",
    );
  });

  it("runs calls through middleware, validation and permissions like any tool", async () => {
    const seen: ToolCall[] = [];
    class TrimMessage extends Middleware {
      override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
        seen.push(call);
        const message = call.input.message;
        return typeof message === "string"
          ? { ...call, input: { ...call.input, message: message.trim() } }
          : call;
      }
    }
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "echo", input: { message: "  hi  " } },
        { name: "get-sum", input: { a: 2, b: 3 } },
        { name: "get-sum", input: { a: "two", b: 3 } },
        { name: "get-tiny-image", input: {} },
        { name: "get-env", input: {} },
      ]),
      textResponse("done"),
    ]);
    const agent = makeAgent({
      provider,
      tools: mcp.tools,
      middleware: [new TrimMessage()],
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "get-env", decision: "deny" }],
      }),
    });
    const ended: string[] = [];
    agent.hooks.on(HookEvent.TOOL_CALL_END, (ctx) => {
      ended.push(ctx.data.toolCall.name);
    });

    const result = await agent.run("go");
    expect(result.status).toBe("completed");
    expect(provider.requests[0]?.tools.map((each) => each.name)).toEqual(names(mcp));
    expect(seen.map((call) => call.name)).toEqual([
      "echo",
      "get-sum",
      "get-sum",
      "get-tiny-image",
      "get-env",
    ]);
    const [echo, sum, invalid, image, env] = toolResults(result.messages);
    expect(echo).toMatchObject({ content: "Echo: hi", isError: false });
    expect(sum).toMatchObject({ content: "The sum of 2 and 3 is 5.", isError: false });
    expect(invalid).toMatchObject({
      content: 'Invalid input for tool "get-sum": a: must be number',
      isError: true,
    });
    expect(image?.isError).toBe(false);
    expect(image?.content).toMatch(/\[image image\/png, \d+ bytes\]/);
    expect(image?.content.length).toBeLessThan(200);
    expect(env).toMatchObject({ isError: true });
    expect(env?.content).toMatch(/^Permission denied/);
    expect(ended).toEqual(["echo", "get-sum", "get-sum", "get-tiny-image", "get-env"]);
  });

  it("parks a call that needs a person and calls the server once it is allowed", async () => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "echo", input: { message: "approved" } }]),
        textResponse("done"),
      ]),
      tools: mcp.tools,
      permissions: new PermissionManager({ default: "ask" }),
    });
    const parked = await agent.run("go");
    expect(parked.status).toBe("awaiting_approval");
    expect(parked.pending.map((each) => each.name)).toEqual(["echo"]);
    const resumed = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    expect(resumed.status).toBe("completed");
    expect(toolResults(resumed.messages)[0]).toMatchObject({
      content: "Echo: approved",
      isError: false,
    });
  });

  it("turns the server's isError into an error result", async () => {
    // Direct registry calls skip validation, so the server sees (and refuses) the bad input.
    const registry = new ToolRegistry(mcp.tools);
    const result = await registry.execute({ id: "c1", name: "get-sum", input: { a: "x", b: 1 } });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/validation/i);
  });
});

describe("a server killed mid-run", SLOW, () => {
  const killedRun = async (mcp: McpTools, kill: () => void) => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "trigger-long-running-operation", input: { duration: 60, steps: 60 } },
        ]),
        toolCallResponse([{ name: "echo", input: { message: "still there?" } }]),
        textResponse("The server is gone; carrying on."),
      ]),
      tools: mcp.tools,
      mcp: [mcp],
    });
    // Killed once the long call has started: whether its request is out yet or not, the call
    // must end with an error result rather than wait for the 60 s operation.
    agent.hooks.on(HookEvent.TOOL_CALL_START, (ctx) => {
      if (ctx.data.toolCall.name === "trigger-long-running-operation") setTimeout(kill, 200);
    });
    const result = await agent.run("go");
    await agent.close();
    return result;
  };

  it("over stdio gives the call an error result, starts the server again for the next, and the run goes on", async () => {
    const marker = "harnessx-kill-stdio";
    const mcp = await mcpTools(everythingOverStdio(marker));
    const result = await killedRun(mcp, () => killChild(marker));
    expect(result.status).toBe("completed");
    expect(result.output).toBe("The server is gone; carrying on.");
    const [longCall, later] = toolResults(result.messages);
    expect(longCall?.isError).toBe(true);
    expect(longCall?.content).toMatch(/MCP/);
    // SPEC §11.1: a server that died is started again on the next call.
    expect(later).toMatchObject({ isError: false, content: "Echo: still there?" });
    expect(mcp.closed).toBe(true); // closed with the agent
  });

  it("over streamable HTTP gives the call an error result, and the run goes on", async () => {
    const server = await everythingOverHttp();
    try {
      const mcp = await mcpTools({ url: server.url });
      const result = await killedRun(mcp, () => server.child.kill("SIGKILL"));
      expect(result.status).toBe("completed");
      const [longCall, later] = toolResults(result.messages);
      expect(longCall?.isError).toBe(true);
      expect(longCall?.content).toMatch(/MCP/);
      expect(later?.isError).toBe(true);
    } finally {
      await server.stop();
    }
  });
});

describe("mcpTools over streamable HTTP (server-everything)", SLOW, () => {
  it("calls tools, and closes with the agent", async () => {
    const server = await everythingOverHttp();
    try {
      const mcp = await mcpTools({ url: server.url, prefix: "everything_" });
      expect(names(mcp)).toEqual(expect.arrayContaining(["everything_echo", "everything_get-sum"]));
      const agent = makeAgent({
        provider: new ScriptedProvider([
          toolCallResponse([{ name: "everything_get-sum", input: { a: 20, b: 22 } }]),
          textResponse("42"),
        ]),
        tools: mcp.tools,
        mcp: [mcp],
      });
      const result = await agent.run("add");
      expect(toolResults(result.messages)[0]).toMatchObject({
        content: "The sum of 20 and 22 is 42.",
        isError: false,
      });
      expect(mcp.closed).toBe(false);
      await agent.close();
      expect(mcp.closed).toBe(true);
      const after = await new ToolRegistry(mcp.tools).execute({
        id: "c1",
        name: "everything_echo",
        input: { message: "hello?" },
      });
      expect(after).toEqual({
        toolCallId: "c1",
        content: expect.stringMatching(/not connected/),
        isError: true,
      });
      await mcp.close(); // closing twice does nothing
    } finally {
      await server.stop();
    }
  });

  it("fails with McpServerError when nothing answers", async () => {
    const server = await everythingOverHttp();
    await server.stop();
    await expect(mcpTools({ url: server.url })).rejects.toThrow(McpServerError);
  });
});

describe("mcpTools with server-memory", SLOW, () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "harnessx-memory-"));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it("stores and finds entities through an agent run", async () => {
    const file = join(folder, "memory.jsonl");
    const mcp = await mcpTools({
      command: process.execPath,
      args: [MEMORY_SERVER],
      env: { MEMORY_FILE_PATH: file },
      stderr: "ignore",
      prefix: "memory_",
    });
    expect(names(mcp)).toEqual(
      expect.arrayContaining(["memory_create_entities", "memory_search_nodes"]),
    );
    const entity = { name: "harnessx", entityType: "project", observations: ["uses XState"] };
    await using agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "memory_create_entities", input: { entities: [entity] } }]),
        toolCallResponse([{ name: "memory_search_nodes", input: { query: "harnessx" } }]),
        textResponse("It uses XState."),
      ]),
      tools: mcp.tools,
      mcp: [mcp],
    });
    const result = await agent.run("Remember harnessx, then look it up.");
    expect(result.status).toBe("completed");
    const [created, found] = toolResults(result.messages);
    expect(created?.isError).toBe(false);
    expect(found?.isError).toBe(false);
    expect(found?.content).toContain("uses XState");
    expect(await readFile(file, "utf8")).toContain('"name":"harnessx"');
  });

  it("fails with McpServerError when the command does not start a server", async () => {
    const failure = mcpTools({
      command: process.execPath,
      args: ["-e", "process.exit(3)"],
      stderr: "ignore",
    });
    await expect(failure).rejects.toThrow(McpServerError);
    await expect(failure).rejects.toMatchObject({ code: "mcp_failed" });
  });
});

describe("mcpTools with awkward tool lists (a fixture server)", SLOW, () => {
  let mcp: McpTools;
  beforeAll(async () => {
    mcp = await mcpTools({
      command: process.execPath,
      args: fixtureArgs(fileURLToPath(new URL("../fixtures/mcp-odd-server.ts", import.meta.url))),
      stderr: "ignore",
    });
  });
  afterAll(async () => {
    await mcp.close();
  });

  it("follows pages, makes names provider-safe, and skips what it cannot offer", () => {
    expect(names(mcp)).toEqual(["files_read", "a_b", "refuse", "wait"]);
    expect(mcp.skipped).toEqual([
      { name: "a_b", reason: 'its name is empty or clashes ("a_b")' },
      { name: "broken", reason: expect.stringMatching(/^its input schema: .*missing/) },
    ]);
    // No annotations: a call in flight at a crash is not repeated.
    expect(mcp.tools.every((each) => each.recovery === "fail")).toBe(true);
  });

  it("calls a renamed tool by its server name, and reports the server's refusal", async () => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "files_read", input: { path: "a.txt" } },
          { name: "refuse", input: {} },
        ]),
        textResponse("done"),
      ]),
      tools: mcp.tools,
    });
    const [read, refused] = toolResults((await agent.run("go")).messages);
    expect(read).toMatchObject({ content: 'files.read {"path":"a.txt"}', isError: false });
    expect(refused).toMatchObject({ content: "No: the quota is spent.", isError: true });
  });

  it("cancels a call in flight when the run is cancelled", async () => {
    const controller = new AbortController();
    const agent = makeAgent({
      provider: new ScriptedProvider([toolCallResponse([{ name: "wait", input: {} }])]),
      tools: mcp.tools,
    });
    agent.hooks.on(HookEvent.TOOL_CALL_START, () => {
      setTimeout(() => controller.abort(), 50);
    });
    const result = await agent.run("go", { signal: controller.signal });
    expect(result.status).toBe("cancelled");
    expect(mcp.closed).toBe(false);
  });
});

describe("MCP tools in a durable run", SLOW, () => {
  it("are dispatched and committed by the runtime like any tool", async () => {
    const mcp = await mcpTools(everythingOverStdio());
    const agent = makeAgent({
      config: { name: "mcp-agent" },
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "echo", input: { message: "durable" } }]),
        textResponse("done"),
      ]),
      tools: mcp.tools,
      mcp: [mcp],
    });
    const runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger: silent });
    await runtime.start();
    try {
      const result = await (await runtime.submit("mcp-agent", "go")).result();
      expect(result.status).toBe("completed");
      expect(toolResults(result.messages)[0]).toMatchObject({
        content: "Echo: durable",
        isError: false,
      });
    } finally {
      await runtime.close();
      await agent.close();
    }
    expect(mcp.closed).toBe(true);
  });
});

// Referenced so a moved package fails here, not as a confusing spawn error.
it("finds the reference servers installed as dev dependencies", async () => {
  await expect(readFile(EVERYTHING_SERVER, "utf8")).resolves.toContain("streamableHttp");
  await expect(readFile(MEMORY_SERVER, "utf8")).resolves.toContain("MEMORY_FILE_PATH");
});
