import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  Agent,
  AgentRuntime,
  HookEvent,
  mcpTools,
  memoryBackend,
  ToolRegistry,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { fixtureArgs } from "../support/fixture-command.js";
import { captureLogs } from "../support/log-capture.js";
import {
  EVERYTHING_SERVER,
  everythingOverHttp,
  killChild,
  killChildAndWait,
} from "../support/mcp-servers.js";
import { useTracing } from "../support/tracing.js";

const tracing = useTracing();

// Real server processes on a shared 2-core machine: slow, never wrong.
const SLOW = { timeout: 90_000 };

const DB_PASSWORD = "Sup3rS3cretPw";
const ENV_TOKEN = "tok-canary-4b1f9e2a7c3d";
const CANARIES = [DB_PASSWORD, ENV_TOKEN, "postgresql://app"];

const call = (registry: ToolRegistry, id: string, name: string, input: Record<string, unknown>) =>
  registry.execute({ id, name, input });

describe("MCP credentials (SPEC §11.1)", SLOW, () => {
  it("never show a server's arguments or environment in results, errors, logs or the run", async () => {
    const marker = "harnessx-canary-stdio";
    const mcp = await mcpTools({
      command: process.execPath,
      args: [EVERYTHING_SERVER, "stdio", `postgresql://app:${DB_PASSWORD}@db.internal/app`, marker],
      env: { API_TOKEN: ENV_TOKEN },
      stderr: "ignore",
    });
    const logs = captureLogs("debug");
    const agent = new Agent({
      logger: logs.logger,
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "get-env", input: {} }]),
        toolCallResponse([
          { name: "trigger-long-running-operation", input: { duration: 20, steps: 20 } },
        ]),
        textResponse("done"),
      ]),
      tools: mcp.tools,
      mcp: [mcp],
    });
    agent.hooks.on(HookEvent.TOOL_CALL_START, (context) => {
      if (context.data.toolCall.name === "trigger-long-running-operation") {
        setTimeout(() => killChild(marker), 300);
      }
    });

    const result = await agent.run("go");
    await agent.close();

    expect(result.status).toBe("completed");
    const [env, killed] = result.messages
      .flatMap((message) => message.content)
      .filter((block) => block.type === "tool_result");
    // The environment dump is there, with the secret value redacted.
    expect(env).toMatchObject({
      isError: false,
      content: expect.stringContaining('"API_TOKEN": "[redacted]"'),
    });
    expect(killed).toMatchObject({
      isError: true,
      content: expect.stringContaining('MCP server "node"'),
    });
    const everything = JSON.stringify(result) + logs.lines.join("\n");
    for (const canary of CANARIES) expect(everything).not.toContain(canary);
  });
});

describe("MCP credentials in a durable run", SLOW, () => {
  it("reach no record, log line or span", async () => {
    const marker = "harnessx-canary-durable";
    const mcp = await mcpTools({
      command: process.execPath,
      args: [EVERYTHING_SERVER, "stdio", `postgresql://app:${DB_PASSWORD}@db.internal/app`, marker],
      env: { API_TOKEN: ENV_TOKEN },
      stderr: "ignore",
    });
    const logs = captureLogs("debug");
    const agent = new Agent({
      config: { name: "canary-agent" },
      logger: logs.logger,
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "get-env", input: {} }]),
        toolCallResponse([{ name: "echo", input: { message: "after the crash" } }]),
        textResponse("done"),
      ]),
      tools: mcp.tools,
      mcp: [mcp],
    });
    // Killed between two calls (and seen gone): the next call starts it again.
    agent.hooks.on(HookEvent.TOOL_CALL_END, async (context) => {
      if (context.data.toolCall.name !== "get-env") return;
      await killChildAndWait(marker);
    });
    const runtime = new AgentRuntime({
      agents: [agent],
      backend: memoryBackend(),
      logger: logs.logger,
    });
    await runtime.start();
    try {
      const handle = await runtime.submit("canary-agent", "go");
      const result = await handle.result();
      const record = await handle.record();
      expect(result.status).toBe("completed");
      const results = result.messages
        .flatMap((message) => message.content)
        .filter((block) => block.type === "tool_result");
      expect(results[1]).toMatchObject({ content: "Echo: after the crash", isError: false });
      const everything = [
        JSON.stringify(result),
        JSON.stringify(record),
        logs.lines.join("\n"),
        JSON.stringify(
          tracing.spans().map((span) => ({ name: span.name, attributes: span.attributes })),
        ),
      ].join("\n");
      expect(everything).toContain("[redacted]");
      for (const canary of CANARIES) expect(everything).not.toContain(canary);
    } finally {
      await runtime.close();
      await agent.close();
    }
  });
});

describe("MCP reconnection", SLOW, () => {
  it("starts a killed stdio server again on the next call", async () => {
    const marker = "harnessx-reconnect-stdio";
    const mcp = await mcpTools({
      command: process.execPath,
      args: [EVERYTHING_SERVER, "stdio", marker],
      stderr: "ignore",
    });
    const registry = new ToolRegistry(mcp.tools);
    try {
      expect(await call(registry, "c1", "echo", { message: "one" })).toMatchObject({
        content: "Echo: one",
      });
      await killChildAndWait(marker);

      expect(await call(registry, "c2", "echo", { message: "two" })).toEqual({
        toolCallId: "c2",
        content: "Echo: two",
        isError: false,
      });
      expect(mcp.closed).toBe(false);
    } finally {
      await mcp.close();
    }
    expect(mcp.closed).toBe(true);
  });

  it("opens a new session on a restarted HTTP server, and reports closed when it cannot", async () => {
    let server = await everythingOverHttp();
    const port = Number(new URL(server.url).port);
    const mcp = await mcpTools({ url: server.url });
    const registry = new ToolRegistry(mcp.tools);
    try {
      expect(await call(registry, "h1", "echo", { message: "before" })).toMatchObject({
        isError: false,
      });
      await server.stop();
      server = await everythingOverHttp(port);

      expect(await call(registry, "h2", "echo", { message: "after" })).toEqual({
        toolCallId: "h2",
        content: "Echo: after",
        isError: false,
      });
      expect(mcp.closed).toBe(false);

      // Gone for good: the call fails, the next one cannot reconnect, and the tools say so.
      await server.stop();
      const gone = await call(registry, "h3", "echo", { message: "gone" });
      const again = await call(registry, "h4", "echo", { message: "again" });
      expect(gone.isError).toBe(true);
      expect(again).toMatchObject({
        isError: true,
        content: expect.stringContaining("could not be reconnected"),
      });
      expect(mcp.closed).toBe(true);
    } finally {
      await mcp.close();
      await server.stop();
    }
  });
});

describe("MCP results over maxToolResultBytes (#34 item 8)", SLOW, () => {
  it("refuses a result over the limit and keeps the server; one past the SDK's 10 MB buffer reconnects", async () => {
    const mcp = await mcpTools({
      command: process.execPath,
      args: fixtureArgs(fileURLToPath(new URL("../fixtures/mcp-odd-server.ts", import.meta.url))),
      stderr: "ignore",
      maxToolResultBytes: 100_000,
    });
    const registry = new ToolRegistry(mcp.tools);
    try {
      const big = await call(registry, "b1", "files_read", { path: "big:200000" });
      expect(big).toMatchObject({
        isError: true,
        content: expect.stringContaining("maxToolResultBytes (100000)"),
      });
      // Refused without killing the connection: the same server answers the next call.
      expect(await call(registry, "b2", "files_read", { path: "a.txt" })).toMatchObject({
        content: 'files.read {"path":"a.txt"}',
        isError: false,
      });

      const huge = await call(registry, "b3", "files_read", { path: `big:${11 * 1024 * 1024}` });
      expect(huge).toMatchObject({
        isError: true,
        content: expect.stringContaining("maxToolResultBytes"),
      });
      // Past the SDK's read buffer the connection closes: the next call starts the server again.
      expect(await call(registry, "b4", "files_read", { path: "b.txt" })).toMatchObject({
        content: 'files.read {"path":"b.txt"}',
        isError: false,
      });
      expect(mcp.closed).toBe(false);
    } finally {
      await mcp.close();
    }
  });
});
