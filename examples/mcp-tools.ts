// MCP tools: `mcpTools()` connects to an MCP server (here the reference memory server, spawned
// over stdio) and offers its tools as ordinary harnessx tools. Their JSON schemas validate the
// model's input; middleware, hooks and permissions apply as to any tool; `mcp: [mcp]` closes
// the connection (and stops the server) with the agent.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { Agent, HookEvent, mcpTools, PermissionManager } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

// Installed with `npm install @modelcontextprotocol/server-memory`; `npx -y` would fetch it.
const memoryServer = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-memory/dist/index.js", import.meta.url),
);
const folder = await mkdtemp(join(tmpdir(), "harnessx-mcp-"));

const mcp = await mcpTools({
  command: process.execPath,
  args: [memoryServer],
  env: { MEMORY_FILE_PATH: join(folder, "memory.jsonl") },
  stderr: "ignore",
});
console.log(`tools: ${mcp.tools.map((each) => each.name).join(", ")}`);

const lisbon = { name: "Lisbon", entityType: "city", observations: ["sunny in June"] };
const provider = new ScriptedProvider([
  toolCallResponse([
    { name: "create_entities", input: { entities: [lisbon] } },
    { name: "search_nodes", input: { query: 42 } },
  ]),
  toolCallResponse([
    { name: "open_nodes", input: { names: ["Lisbon"] } },
    { name: "delete_entities", input: { entityNames: ["Lisbon"] } },
  ]),
  textResponse("Lisbon is sunny in June."),
]);

{
  await using agent = new Agent({
    provider,
    tools: [...mcp.tools],
    mcp: [mcp],
    permissions: new PermissionManager({
      default: "allow",
      rules: [{ tool: "delete_*", decision: "deny" }],
    }),
    logger: pino({ level: "silent" }),
  });
  agent.hooks.on(HookEvent.TOOL_CALL_END, (ctx) => {
    const { toolCall, result } = ctx.data;
    const shown = result.content.replaceAll(/\s+/g, " ").slice(0, 100);
    console.log(`${toolCall.name} -> ${result.isError ? "error: " : ""}${shown}`);
  });
  const result = await agent.run("What do you remember about Lisbon?");
  console.log(`${result.status}: ${result.output}`);
}
console.log(`closed with the agent: ${mcp.closed}`);
await rm(folder, { recursive: true, force: true });
