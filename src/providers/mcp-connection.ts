import { createRequire } from "node:module";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { jsonSchemaInput } from "../tools/json-schema-input.js";
import type { RecoveryPolicy, Tool } from "../tools/tool.js";
import { McpServerError, type McpTools, type ParsedMcpOptions } from "./mcp.js";
import { mcpResultText } from "./mcp-content.js";

const DEFAULT_TIMEOUT_MS = 300_000;
// src/providers/ and dist/providers/ alike sit two folders below the package root.
const CLIENT_VERSION = (createRequire(import.meta.url)("../../package.json") as { version: string })
  .version;
const PING_TIMEOUT_MS = 10_000;
// Bounds the tool listing of a server whose pages never end.
const MAX_PAGES = 100;

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/** Connects, lists every tool (following pages) and wraps each one as a harnessx tool. */
export async function connectMcp(options: ParsedMcpOptions): Promise<McpTools> {
  const label = describeServer(options);
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = new Client({ name: options.clientName ?? "harnessx", version: CLIENT_VERSION });
  let listed: McpTool[];
  try {
    await client.connect(transportFor(options), { timeout });
    listed = await listTools(client, timeout);
  } catch (error) {
    await client.close().catch(() => {});
    throw new McpServerError(`MCP server ${label}: ${messageOf(error)}`, { cause: error });
  }

  let closed = false;
  const inFlight = new Set<AbortController>();
  const abandon = (reason: string) => {
    for (const controller of inFlight) controller.abort(new Error(reason));
  };
  // A stdio server that exits, or an HTTP session that ends, closes the client.
  client.onclose = () => {
    closed = true;
    abandon(`MCP server ${label} closed the connection.`);
  };
  // The SDK reports a broken HTTP stream here but leaves its request waiting for the timeout;
  // a ping tells a lost server (fail the calls in flight now) from a passing hiccup.
  let checking = false;
  client.onerror = () => {
    if (checking || inFlight.size === 0) return;
    checking = true;
    void client
      .ping({ timeout: PING_TIMEOUT_MS })
      .then(
        () => {},
        (error: unknown) => abandon(`MCP server ${label} stopped answering: ${messageOf(error)}`),
      )
      .finally(() => {
        checking = false;
      });
  };
  const call = async (
    name: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<string> => {
    if (closed) throw new Error(`MCP server ${label} is not connected.`);
    const lost = new AbortController();
    inFlight.add(lost);
    let result: Awaited<ReturnType<Client["callTool"]>>;
    try {
      result = await client.callTool({ name, arguments: input }, undefined, {
        signal: AbortSignal.any([signal, lost.signal]),
        timeout,
      });
    } catch (error) {
      throw new Error(`MCP tool "${name}" failed: ${messageOf(error)}`);
    } finally {
      inFlight.delete(lost);
    }
    const outcome = mcpResultText(result);
    if (outcome.isError) throw new Error(outcome.text || `MCP tool "${name}" reported an error.`);
    return outcome.text;
  };

  const tools: Tool<Record<string, unknown>>[] = [];
  const skipped: { name: string; reason: string }[] = [];
  const taken = new Set<string>();
  for (const remote of listed) {
    const name = toolName(options.prefix ?? "", remote.name);
    if (name === "" || taken.has(name)) {
      skipped.push({ name: remote.name, reason: `its name is empty or clashes ("${name}")` });
      continue;
    }
    let schema: ReturnType<typeof jsonSchemaInput>;
    try {
      schema = jsonSchemaInput(remote.inputSchema);
    } catch (error) {
      skipped.push({ name: remote.name, reason: `its input schema: ${messageOf(error)}` });
      continue;
    }
    taken.add(name);
    tools.push(
      Object.freeze({
        name,
        description: remote.description ?? remote.title ?? remote.annotations?.title ?? "",
        input: schema.input,
        inputSchema: schema.inputSchema,
        handler: (input: Record<string, unknown>, context: { signal: AbortSignal }) =>
          call(remote.name, input, context.signal),
        recovery: options.recovery ?? recoveryOf(remote),
      }),
    );
  }

  const version = client.getServerVersion();
  const close = async (): Promise<void> => {
    closed = true;
    await client.close();
  };
  return {
    tools,
    skipped,
    server: version && { name: version.name, version: version.version },
    get closed() {
      return closed;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function transportFor(options: ParsedMcpOptions): Transport {
  if ("url" in options) {
    return new StreamableHTTPClientTransport(
      new URL(options.url),
      options.headers ? { requestInit: { headers: options.headers } } : undefined,
    );
  }
  return new StdioClientTransport({
    command: options.command,
    args: options.args ?? [],
    stderr: options.stderr ?? "inherit",
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
}

async function listTools(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < MAX_PAGES; pages += 1) {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new Error(`its tool list goes on past ${MAX_PAGES} pages`);
}

// MCP allows names that providers refuse ("." and "/"; more than 64 characters).
const toolName = (prefix: string, remote: string): string =>
  `${prefix}${remote.replace(/[^a-zA-Z0-9_-]/g, "_")}`.slice(0, 64);

// A call in flight at a crash runs again only where the server says that is harmless.
const recoveryOf = (remote: McpTool): RecoveryPolicy =>
  remote.annotations?.readOnlyHint === true || remote.annotations?.idempotentHint === true
    ? "retry"
    : "fail";

// Names the server without anything secret: no environment, no URL query or credentials.
function describeServer(options: ParsedMcpOptions): string {
  if ("url" in options) {
    const url = new URL(options.url);
    return `"${url.origin}${url.pathname}"`;
  }
  return `"${[options.command, ...(options.args ?? [])].join(" ")}"`;
}
