import type { z } from "zod";
import { MAX_TIMEOUT_MS } from "../core/deadline.js";
import { ToolDefinitionError } from "../core/errors.js";
import type { JSONSchema } from "../core/values.js";
import { toJsonSchema } from "./json-schema.js";
import type { ToolSandbox } from "./tool-sandbox.js";

/** A call's time limit when neither its tool nor the agent's config sets one. */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;

/** What a durable run does with a call that was in flight when its worker died. */
export type RecoveryPolicy = "retry" | "fail" | "ask";

/** What a handler receives besides its input. */
export interface ToolContext {
  /** Aborted when the run is cancelled or the call runs past its timeout. */
  signal: AbortSignal;
  runId: string;
  toolCallId: string;
  /** The agent's sandbox, when it was built with one. */
  sandbox?: ToolSandbox;
}

export type ToolHandler<Input> = (input: Input, context: ToolContext) => unknown;

export interface ToolOptions<Schema extends z.ZodType> {
  name: string;
  description: string;
  /** A zod v4 schema for the input; the JSON schema sent to the model is derived from it. */
  input: Schema;
  /** Returns a string, or a JSON-serialisable value that is stringified. */
  handler: ToolHandler<z.output<Schema>>;
  /**
   * Durable runs only: what to do with a call in flight at a crash.
   * @defaultValue "retry"
   */
  recovery?: RecoveryPolicy;
  /**
   * How long a call may run: past it the handler's `signal` is aborted, the call gets an error
   * result and the run goes on without waiting for the handler.
   * @defaultValue the agent's `config.toolTimeoutMs` (300_000)
   */
  timeoutMs?: number;
}

/** A registered tool: schema, handler and recovery policy. */
export interface Tool<Input = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<Input>;
  readonly inputSchema: JSONSchema;
  // Method syntax on purpose: tools of any input type fit in one `Tool[]`.
  handler(input: Input, context: ToolContext): unknown;
  readonly recovery: RecoveryPolicy;
  /** Absent: the agent's `config.toolTimeoutMs`. */
  readonly timeoutMs?: number;
}

// Names the providers accept for functions (OpenAI and Anthropic share this rule).
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool.
 * @example
 * const search = tool({
 *   name: "search",
 *   description: "Search the web.",
 *   input: z.object({ query: z.string() }),
 *   handler: async ({ query }) => `Results for ${query}`,
 * });
 */
export function tool<Schema extends z.ZodType>(
  options: ToolOptions<Schema>,
): Tool<z.output<Schema>> {
  if (!TOOL_NAME.test(options.name)) {
    throw new ToolDefinitionError(
      `Tool name ${JSON.stringify(options.name)} is invalid: use 1-64 letters, digits, "_" or "-".`,
    );
  }
  if (typeof options.handler !== "function") {
    throw new ToolDefinitionError(`Tool "${options.name}" has no handler function.`);
  }
  const { timeoutMs } = options;
  if (
    timeoutMs !== undefined &&
    !(Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)
  ) {
    throw new ToolDefinitionError(
      `Tool "${options.name}": timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${String(timeoutMs)}.`,
    );
  }
  return Object.freeze({
    name: options.name,
    description: options.description,
    input: options.input as z.ZodType<z.output<Schema>>,
    inputSchema: toJsonSchema(options.input, options.name),
    handler: options.handler,
    recovery: options.recovery ?? "retry",
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}
