// mcpTools' options and error, apart from mcp.ts so that the lazily loaded connection module
// takes them without importing back the module that loads it.
import { z } from "zod";
import { ConfigError, HarnessError, type HarnessErrorOptions } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import type { RecoveryPolicy, Tool } from "../tools/tool.js";
import { describeIssues } from "../tools/validate.js";

interface McpCommonOptions {
  /**
   * Put before every tool name, e.g. `"memory_"`, so two servers' tools cannot clash.
   * @defaultValue ""
   */
  prefix?: string;
  /**
   * How long one tool call (and the connection handshake) may take.
   * @defaultValue 300_000
   */
  timeoutMs?: number;
  /**
   * The tools' recovery policy in durable runs (see `tool()`).
   * @defaultValue "retry" for tools the server marks `readOnlyHint` or `idempotentHint`, else "fail"
   */
  recovery?: RecoveryPolicy;
  /**
   * The client name sent to the server in the handshake.
   * @defaultValue "harnessx"
   */
  clientName?: string;
  /**
   * How the server is named in errors and logs (never its command line, arguments,
   * environment or URL credentials). @defaultValue the command's file name, or the URL's host
   */
  name?: string;
  /**
   * The biggest tool result (UTF-8 bytes of its text) given to the model; a bigger one is an
   * error result. @defaultValue 1_048_576 (1 MB)
   */
  maxToolResultBytes?: number;
}

/** A server started as a child process, spoken to over its stdin and stdout. */
export interface McpStdioOptions extends McpCommonOptions {
  command: string;
  args?: readonly string[];
  /** Added to a small safe set of the parent's variables (PATH, HOME…), not to all of them. */
  env?: Record<string, string>;
  cwd?: string;
  /** @defaultValue "inherit" */
  stderr?: "inherit" | "ignore";
}

/** A server reached over streamable HTTP. */
export interface McpHttpOptions extends McpCommonOptions {
  url: string | URL;
  /** Sent with every request, e.g. `{ authorization: "Bearer …" }`. */
  headers?: Record<string, string>;
}

export type McpToolsOptions = McpStdioOptions | McpHttpOptions;

/** A connected MCP server's tools. */
export interface McpTools extends AsyncDisposable {
  /** Ordinary harnessx tools: pass them as `new Agent({ tools: [...mcp.tools] })`. */
  readonly tools: readonly Tool<Record<string, unknown>>[];
  /** The server's name and version from the handshake. */
  readonly server: { readonly name: string; readonly version: string } | undefined;
  /** Tools the server listed that could not be offered (a clashing name, a schema that does not compile). */
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
  /**
   * True once closed, or once the server went away and could not be reconnected; calls then give
   * error results. A server that died or lost its session is reconnected on the next call.
   */
  readonly closed: boolean;
  /** Disconnects (stopping a stdio server). Idempotent. */
  close(): Promise<void>;
}

/** An MCP server could not be reached or did not list its tools. */
export class McpServerError extends HarnessError {
  override name = "McpServerError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("mcp_failed", message, options);
  }
}

const common = lazySchema(() => ({
  prefix: z
    .string()
    .regex(/^[a-zA-Z0-9_-]*$/, 'use letters, digits, "_" or "-"')
    .max(32)
    .optional(),
  timeoutMs: z.number().int().positive().optional(),
  recovery: z.enum(["retry", "fail", "ask"]).optional(),
  clientName: z.string().min(1).optional(),
  name: z.string().min(1).max(100).optional(),
  maxToolResultBytes: z.number().int().positive().optional(),
}));

const McpStdioOptionsSchema = lazySchema(() =>
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    stderr: z.enum(["inherit", "ignore"]).optional(),
    ...common,
  }),
);

const McpHttpOptionsSchema = lazySchema(() =>
  z.strictObject({
    url: z.union([z.instanceof(URL), z.url({ protocol: /^https?$/ })]),
    headers: z.record(z.string(), z.string()).optional(),
    ...common,
  }),
);

export type ParsedMcpOptions =
  | z.output<typeof McpStdioOptionsSchema>
  | z.output<typeof McpHttpOptionsSchema>;

/** `mcpTools`' options, checked: a `ConfigError` names what is wrong. */
export function parseMcpOptions(options: unknown): ParsedMcpOptions {
  if (typeof options !== "object" || options === null) {
    throw new ConfigError("mcpTools options must be an object: { command, args } or { url }.");
  }
  const schema = "url" in options ? McpHttpOptionsSchema : McpStdioOptionsSchema;
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid mcpTools options: ${describeIssues(parsed.error.issues)}`);
  }
  return parsed.data;
}
