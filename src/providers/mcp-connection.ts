import { createRequire } from "node:module";
import { basename } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpError, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { scrubCredentials } from "../core/scrub-credentials.js";
import { jsonSchemaInput } from "../tools/json-schema-input.js";
import type { RecoveryPolicy, Tool } from "../tools/tool.js";
import { mcpResultText } from "./mcp-content.js";
import { McpServerError, type McpTools, type ParsedMcpOptions } from "./mcp-options.js";

const DEFAULT_TIMEOUT_MS = 300_000;
// Below the SDK's stdio read buffer (10 MB), so a result too big is refused before it is read whole.
const DEFAULT_MAX_RESULT_BYTES = 1_048_576;
// src/providers/ and dist/providers/ alike sit two folders below the package root.
const CLIENT_VERSION = (createRequire(import.meta.url)("../../package.json") as { version: string })
  .version;
const PING_TIMEOUT_MS = 10_000;
// Bounds the tool listing of a server whose pages never end.
const MAX_PAGES = 100;

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/**
 * One live client of the server. A stdio server that exits, a read buffer that overflows or an
 * HTTP session that ends closes it; the next call then opens another (`McpLink`).
 */
interface LiveClient {
  client: Client;
  /** Set when the transport closed under it. */
  lost: boolean;
  inFlight: Set<AbortController>;
}

/** Connects, lists every tool (following pages) and wraps each one as a harnessx tool. */
export async function connectMcp(options: ParsedMcpOptions): Promise<McpTools> {
  const label = describeServer(options);
  const { secrets, commandLine } = secretsOf(options);
  // Errors never repeat the command line; results keep paths an argument names (a filesystem
  // server's root) but never a credential.
  const clean = (text: string): string => scrubCredentials(text, [...secrets, ...commandLine]);
  const cleanResult = (text: string): string => scrubCredentials(text, secrets);
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxToolResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  let listed: McpTool[];
  let live: LiveClient;
  try {
    live = await open(options, label, timeout);
    listed = await listTools(live.client, timeout);
  } catch (error) {
    throw new McpServerError(`MCP server ${label}: ${clean(messageOf(error))}`);
  }

  let closedByUser = false;
  let unreachable = false;
  let reconnecting: Promise<LiveClient> | undefined;
  // Once per call: a lost connection is opened again (stdio: the server started again; HTTP: a
  // new session); when that fails the tools report `closed`.
  const reconnect = async (): Promise<LiveClient> => {
    reconnecting ??= (async () => {
      await live.client.close().catch(() => {});
      try {
        live = await open(options, label, timeout);
        unreachable = false;
        return live;
      } catch (error) {
        unreachable = true;
        throw new Error(
          `MCP server ${label} is not connected and could not be reconnected: ${messageOf(error)}`,
        );
      } finally {
        reconnecting = undefined;
      }
    })();
    return reconnecting;
  };

  const callOnce = async (
    current: LiveClient,
    name: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Awaited<ReturnType<Client["callTool"]>>> => {
    const lost = new AbortController();
    current.inFlight.add(lost);
    try {
      return await current.client.callTool({ name, arguments: input }, undefined, {
        signal: AbortSignal.any([signal, lost.signal]),
        timeout,
      });
    } finally {
      current.inFlight.delete(lost);
    }
  };

  const call = async (
    name: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<string> => {
    if (closedByUser) throw new Error(`MCP server ${label} is not connected (closed).`);
    let reconnected = false;
    let current = live;
    try {
      if (current.lost) {
        current = await reconnect();
        reconnected = true;
      }
      let result: Awaited<ReturnType<Client["callTool"]>>;
      try {
        result = await callOnce(current, name, input, signal);
      } catch (error) {
        // An HTTP server that restarted refuses the old session before running anything: the
        // call is sent once more on a new session.
        if (reconnected || signal.aborted || !isSessionLost(error)) throw error;
        current = await reconnect();
        reconnected = true;
        result = await callOnce(current, name, input, signal);
      }
      const outcome = mcpResultText(result);
      const bytes = Buffer.byteLength(outcome.text, "utf8");
      if (bytes > maxBytes) {
        throw new Error(
          `MCP tool "${name}" returned ${bytes} bytes, over maxToolResultBytes (${maxBytes}); the result was refused.`,
        );
      }
      if (outcome.isError) {
        throw new ServerRefusal(clean(outcome.text) || `MCP tool "${name}" reported an error.`);
      }
      return cleanResult(outcome.text);
    } catch (error) {
      // The tool's own error result goes to the model as the server worded it.
      if (error instanceof ServerRefusal) throw new Error(error.message);
      // Anything but the server's own answer (a JSON-RPC error) means the connection is in doubt:
      // the next call opens it again.
      if (!signal.aborted && !isServerAnswer(error)) current.lost = true;
      const message = clean(messageOf(error));
      if (/ReadBuffer exceeded/.test(message)) {
        throw new Error(
          `MCP tool "${name}" returned more than the connection reads at once (over maxToolResultBytes, ${maxBytes}); the result was refused and the server is reconnected on the next call.`,
        );
      }
      throw new Error(
        message.startsWith("MCP ") ? message : `MCP tool "${name}" failed: ${message}`,
      );
    }
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

  const version = live.client.getServerVersion();
  const close = async (): Promise<void> => {
    closedByUser = true;
    await live.client.close();
  };
  return {
    tools,
    skipped,
    server: version && { name: version.name, version: version.version },
    get closed() {
      return closedByUser || unreachable;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A tool's `isError` answer: the server is fine, the call is not. */
class ServerRefusal extends Error {}

/** A connected client whose loss is noticed: calls in flight fail at once, the next one reconnects. */
async function open(
  options: ParsedMcpOptions,
  label: string,
  timeout: number,
): Promise<LiveClient> {
  const client = new Client({ name: options.clientName ?? "harnessx", version: CLIENT_VERSION });
  const live: LiveClient = { client, lost: false, inFlight: new Set() };
  const abandon = (reason: string) => {
    for (const controller of live.inFlight) controller.abort(new Error(reason));
  };
  client.onclose = () => {
    live.lost = true;
    abandon(`MCP server ${label} closed the connection.`);
  };
  // The SDK reports a broken HTTP stream here but leaves its request waiting for the timeout;
  // a ping tells a lost server (fail the calls in flight now) from a passing hiccup.
  let checking = false;
  client.onerror = (error: Error) => {
    if (/ReadBuffer exceeded/.test(error.message)) {
      live.lost = true;
      abandon(error.message);
      return;
    }
    if (checking || live.inFlight.size === 0) return;
    checking = true;
    void client
      .ping({ timeout: PING_TIMEOUT_MS })
      .then(
        () => {},
        (pingError: unknown) => {
          live.lost = true;
          abandon(`MCP server ${label} stopped answering: ${messageOf(pingError)}`);
        },
      )
      .finally(() => {
        checking = false;
      });
  };
  try {
    await client.connect(transportFor(options), { timeout });
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return live;
}

// JSON-RPC errors a live server answers with (bad params, unknown tool…); -32000 and -32001 are
// the SDK's own "connection closed" and "request timed out".
const isServerAnswer = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    error instanceof McpError && typeof code === "number" && code !== -32000 && code !== -32001
  );
};

// What the streamable HTTP transport throws for a session the server no longer knows.
const isSessionLost = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 404 || /session/i.test(messageOf(error));
};

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

// Names the server by its name alone: never its arguments, environment or URL credentials.
function describeServer(options: ParsedMcpOptions): string {
  if (options.name !== undefined) return `"${options.name}"`;
  if ("url" in options) return `"${new URL(options.url).host}"`;
  return `"${basename(options.command)}"`;
}

/**
 * What must not leave this module: `secrets` (environment and header values, URL credentials and
 * query values, an argument holding anything credential-shaped) in nothing, and the
 * `commandLine` (every argument) in no error.
 */
function secretsOf(options: ParsedMcpOptions): { secrets: string[]; commandLine: string[] } {
  if ("url" in options) {
    const url = new URL(options.url);
    const headers = Object.values(options.headers ?? {});
    return {
      secrets: [
        decodeURIComponent(url.username),
        decodeURIComponent(url.password),
        ...url.searchParams.values(),
        ...headers,
        ...headers.map((value) => value.replace(/^\S+\s+/, "")),
      ],
      commandLine: [],
    };
  }
  const args = options.args ?? [];
  return {
    secrets: [
      ...Object.values(options.env ?? {}),
      ...args.filter((arg) => scrubCredentials(arg) !== arg),
    ],
    commandLine: [options.command, ...args],
  };
}
