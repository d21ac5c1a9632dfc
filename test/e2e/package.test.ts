import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url);

// Runs as a plain Node ESM program resolving "harnessx" through package.json's exports map
// (self-reference), against the built dist/ (npm test builds first).
async function node(source: string): Promise<string> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", source], {
    cwd: root,
    timeout: 15_000,
  });
  return stdout.trim();
}

describe("the built package", () => {
  it("is importable as `harnessx` from plain Node and runs an agent", async () => {
    const output = await node(`
      import { Agent, Middleware, HookEvent, HOOK_PAYLOADS, ToolCallEndData, tool } from "harnessx";
      import { ScriptedProvider, toolCallResponse, textResponse } from "harnessx/testing";
      import { z } from "zod";
      const search = tool({ name: "search", description: "d", input: z.object({ query: z.string() }),
        handler: async ({ query }) => "Results for " + query });
      const agent = new Agent({ tools: [search], provider: new ScriptedProvider([
        toolCallResponse([{ name: "search", input: { query: "x" } }]), textResponse("done") ]) });
      const result = await agent.run("go");
      console.log(JSON.stringify({ status: result.status, output: result.output,
        middleware: typeof Middleware, same: HOOK_PAYLOADS[HookEvent.TOOL_CALL_END] === ToolCallEndData }));
    `);
    expect(JSON.parse(output)).toEqual({
      status: "completed",
      output: "done",
      middleware: "function",
      same: true,
    });
  });

  it("is requirable as `harnessx` from CommonJS (require(esm), Node >= 20.19) and runs an agent", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        "-e",
        `
        const { Agent, HarnessError } = require("harnessx");
        const { ScriptedProvider, textResponse } = require("harnessx/testing");
        const agent = new Agent({ provider: new ScriptedProvider([textResponse("from cjs")]) });
        agent.run("go").then((result) => console.log(JSON.stringify({
          status: result.status, output: result.output, errors: typeof HarnessError })));
        `,
      ],
      { cwd: root, timeout: 15_000 },
    );
    expect(JSON.parse(stdout.trim())).toEqual({
      status: "completed",
      output: "from cjs",
      errors: "function",
    });
  });

  it("loads BullMQ only when a Redis backend starts, not with the package", async () => {
    const output = await node(`
      import { createRequire } from "node:module";
      import { AgentRuntime, memoryBackend } from "harnessx";
      const loaded = () => Object.keys(createRequire(import.meta.url).cache)
        .some((path) => path.includes("/node_modules/bullmq/"));
      const runtime = new AgentRuntime({ agents: [], backend: memoryBackend() });
      await runtime.start();
      await runtime.close();
      const before = loaded();
      await import("bullmq");
      console.log(JSON.stringify({ before, after: loaded() }));
    `);
    // "after" shows that the check sees BullMQ once it is loaded.
    expect(JSON.parse(output)).toEqual({ before: false, after: true });
  });

  it("loads the MCP SDK only when mcpTools is called, not with the package", async () => {
    // The SDK is ESM; ajv, the CommonJS validator it and harnessx load with it, shows in the cache.
    const output = await node(`
      import { createRequire } from "node:module";
      import { Agent, mcpTools, McpServerError } from "harnessx";
      const loaded = () => Object.keys(createRequire(import.meta.url).cache)
        .some((path) => path.includes("/node_modules/ajv/"));
      await new Agent().close();
      const before = loaded();
      const failure = await mcpTools({ command: process.execPath, args: ["-e", "process.exit(3)"],
        stderr: "ignore" }).catch((error) => error);
      console.log(JSON.stringify({ before, after: loaded(), refused: failure instanceof McpServerError }));
    `);
    expect(JSON.parse(output)).toEqual({ before: false, after: true, refused: true });
  });

  it("declares types and an exports map for every entry point", async () => {
    const manifest = JSON.parse(await readFile(new URL("package.json", root), "utf8")) as {
      type: string;
      exports: Record<string, { types: string; default: string }>;
    };
    expect(manifest.type).toBe("module");
    for (const entry of [".", "./testing", "./backend"]) {
      const target = manifest.exports[entry];
      expect(target).toBeDefined();
      await expect(readFile(new URL(target?.types ?? "", root))).resolves.toBeInstanceOf(Buffer);
      await expect(readFile(new URL(target?.default ?? "", root))).resolves.toBeInstanceOf(Buffer);
    }
  });
});
