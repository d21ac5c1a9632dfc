import { z } from "zod";
import { lazySchema } from "../../core/lazy-schema.js";
import {
  Message,
  ProviderResponse,
  RunError,
  ToolCall,
  ToolResult,
  ToolSchema,
} from "../../core/values.js";

const ProviderRequestData = lazySchema(() =>
  z.object({
    system: z.string(),
    messages: Message.array(),
    tools: ToolSchema.array(),
    model: z.string(),
    maxTokens: z.number(),
    temperature: z.number(),
    stream: z.boolean(),
    prefixKey: z.string().nullable(),
    /** The structured answer asked for (`config.output`). */
    output: z
      .object({ name: z.string(), schema: z.record(z.string(), z.unknown()) })
      .exactOptional(),
  }),
);

/** What every entry carries: its run, the provider call it belongs to, and when it happened. */
const common = lazySchema(() => ({
  runId: z.string(),
  /** Provider calls started so far in the run (0 before the first). */
  iteration: z.number().int().nonnegative(),
  /** Milliseconds since the epoch, from the agent's clock. */
  at: z.number(),
}));

/**
 * One entry of a flight recording. The model side is recorded raw: `llm_response_raw` before
 * response middleware, `tool_result_raw` before result middleware.
 */
export const RecorderEntry = lazySchema(() =>
  z.discriminatedUnion("type", [
    z.object({
      type: z.literal("run_start"),
      ...common,
      sessionId: z.string(),
      agent: z.string(),
      /** The conversation the run started with. */
      input: Message.array(),
    }),
    /** The request as sent to the provider (after `beforeLlmCall`). */
    z.object({ type: z.literal("llm_request"), ...common, request: ProviderRequestData }),
    /** The provider's response before `afterLlmCall`. */
    z.object({
      type: z.literal("llm_response_raw"),
      ...common,
      response: ProviderResponse,
      durationMs: z.number(),
    }),
    /** A handler's outcome before `afterToolExecution`. */
    z.object({
      type: z.literal("tool_result_raw"),
      ...common,
      toolCall: ToolCall,
      result: ToolResult,
    }),
    /**
     * Who decided what about a tool call: the policy (`policy`, then again at dispatch:
     * `recheck`), or a person (`person`). `invalid`: the call named no tool or failed validation.
     */
    z.object({
      type: z.literal("decision"),
      ...common,
      toolCallId: z.string(),
      name: z.string(),
      decision: z.enum(["allow", "deny", "ask", "invalid", "respond"]),
      source: z.enum(["policy", "recheck", "person"]),
      reason: z.string(),
      by: z.string().optional(),
    }),
    /** A phase failed; the run ends `failed` (or `cancelled`). */
    z.object({ type: z.literal("error"), ...common, error: RunError }),
    z.object({
      type: z.literal("run_end"),
      ...common,
      status: z.enum(["completed", "failed", "cancelled"]),
      /** The final text, or with `config.output` the parsed value. */
      output: z.json().nullable(),
      error: RunError.nullable(),
    }),
  ]),
);
export type RecorderEntry = z.infer<typeof RecorderEntry>;
export type RecorderEntryType = RecorderEntry["type"];

/**
 * Where a flight recorder keeps its entries, per run, in the order appended. The default keeps
 * them in memory; a durable runtime provides one that keeps them with the run's event log, so
 * any process can read a run's recording.
 */
export interface RecorderSink {
  append(runId: string, entry: RecorderEntry): Promise<void>;
  /** The run's entries in order; empty for a run never recorded. */
  entries(runId: string): Promise<RecorderEntry[]>;
}

/** What the engine calls at each recording point; `FlightRecorder` implements it. */
export interface RunRecorder {
  record(entry: RecorderEntry): Promise<void>;
  /** Moves the recording to `sink` (a durable runtime's store): `FlightRecorder` has it. */
  useSink?(sink: RecorderSink): void;
}
