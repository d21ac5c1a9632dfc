import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

/** A JSON Schema document, as produced from a tool's zod input schema. */
export type JSONSchema = { [key: string]: unknown };

export const JsonObject = lazySchema(() => z.record(z.string(), z.unknown()));

/** A tool invocation requested by the model. */
export const ToolCall = lazySchema(() =>
  z.object({ id: z.string().min(1), name: z.string().min(1), input: JsonObject }).readonly(),
);
export type ToolCall = z.infer<typeof ToolCall>;

/** The outcome of one tool call, as the model will see it. */
export const ToolResult = lazySchema(() =>
  z.object({ toolCallId: z.string().min(1), content: z.string(), isError: z.boolean() }).readonly(),
);
export type ToolResult = z.infer<typeof ToolResult>;

/** A canonical, provider-neutral tool description sent to the model. */
export const ToolSchema = lazySchema(() =>
  z.object({
    name: z.string().min(1),
    description: z.string(),
    inputSchema: JsonObject,
  }),
);
export interface ToolSchema {
  name: string;
  description: string;
  inputSchema: JSONSchema;
}

export const TextBlock = lazySchema(() => z.object({ type: z.literal("text"), text: z.string() }));
/** Any JSON value: what `providerData` may hold. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/**
 * A thinking block. `providerData` is what the provider needs to get it back unchanged on the
 * next request (an OpenAI reasoning item, an Anthropic signature or redacted thinking).
 */
export const ThinkingBlock = lazySchema(() =>
  z.object({
    type: z.literal("thinking"),
    text: z.string(),
    providerData: z.json().optional(),
  }),
);
export const ToolUseBlock = lazySchema(() =>
  z.object({
    type: z.literal("tool_use"),
    id: z.string().min(1),
    name: z.string().min(1),
    input: JsonObject,
  }),
);
export const ToolResultBlock = lazySchema(() =>
  z.object({
    type: z.literal("tool_result"),
    toolCallId: z.string().min(1),
    content: z.string(),
    isError: z.boolean(),
  }),
);

/** One block of message content: text, thinking, a tool request or a tool result. */
export const ContentBlock = lazySchema(() =>
  z.discriminatedUnion("type", [TextBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock]),
);
export type ContentBlock = z.infer<typeof ContentBlock>;

/** One conversation turn. */
export const Message = lazySchema(() =>
  z.object({
    role: z.enum(["user", "assistant", "tool"]),
    content: z.array(ContentBlock),
  }),
);
export type Message = z.infer<typeof Message>;

/** Token counts of one provider call, or summed over a run. */
export const Usage = lazySchema(() =>
  z.object({
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    cacheReadTokens: z.number().int().nonnegative(),
    cacheWriteTokens: z.number().int().nonnegative(),
  }),
);
export type Usage = z.infer<typeof Usage>;

/** A `Usage`'s fields in their stored order (stored forms keep usage as an array of these). */
export const USAGE_FIELDS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
] as const satisfies readonly (keyof Usage)[];

export const StopReason = lazySchema(() =>
  z.enum(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"]),
);
export type StopReason = z.infer<typeof StopReason>;

/** A completed model response, normalised across providers. */
export const ProviderResponse = lazySchema(() =>
  z.object({
    content: z.array(ContentBlock),
    toolCalls: z.array(ToolCall),
    stopReason: StopReason,
    usage: Usage,
    model: z.string(),
    /**
     * The API's id for this response, where it gives one: traces report it as
     * `gen_ai.response.id`. Not stored with the run.
     */
    id: z.string().optional(),
  }),
);
export type ProviderResponse = z.infer<typeof ProviderResponse>;

/** One person's approval counted towards a call's quorum (`approvals: n` rules). */
export const GivenApproval = lazySchema(() =>
  z.object({
    by: z.string(),
    at: z.number(),
    reason: z.string().nullable(),
  }),
);
export type GivenApproval = z.infer<typeof GivenApproval>;

/**
 * The reason a permission policy gives a call no rule decided: its default decision's (the
 * store leaves the usual one, "allow"'s, out of a stored call's state).
 */
export const defaultDecisionReason = (decision: string): string => `default: ${decision}`;

/** A tool call waiting for a person's decision. */
export const PendingApproval = lazySchema(() =>
  z.object({
    toolCallId: z.string().min(1),
    name: z.string().min(1),
    input: JsonObject,
    reason: z.string(),
    /** A call whose rule asks for more than one person: how many, and who approved so far. */
    approvals: z
      .object({ needed: z.number().int().min(2), given: z.array(GivenApproval) })
      .optional(),
  }),
);
export type PendingApproval = z.infer<typeof PendingApproval>;

/** The serialised form of a run's error: exactly what `HarnessError.toJSON()` returns. */
export const RunError = lazySchema(() =>
  z.object({
    name: z.string(),
    /** `HarnessError.code`: match on it, it is stable across versions and processes. */
    code: z.string(),
    message: z.string(),
    phase: z.string().optional(),
    /** A `ProviderError`'s: whether trying again can help. */
    retryable: z.boolean().optional(),
    /** A `ProviderError`'s: how long the API asked callers to wait, when it said. */
    retryAfterMs: z.number().nonnegative().optional(),
  }),
);
export type RunError = z.infer<typeof RunError>;

export const RunStatus = lazySchema(() =>
  z.enum(["completed", "failed", "cancelled", "awaiting_approval", "paused"]),
);
export type RunStatus = z.infer<typeof RunStatus>;

/** What a run ends with, or where it waits. */
export const RunResult = lazySchema(() =>
  z.object({
    runId: z.string(),
    sessionId: z.string(),
    status: RunStatus,
    /** The final answer's text; with `config.output`, the parsed value (any JSON). */
    output: z.json().nullable(),
    error: RunError.nullable(),
    /**
     * The last model response's stop reason: null before any. Every run of this version has it;
     * a result stored by an older version has none.
     */
    stopReason: StopReason.nullable().optional(),
    /** The agent that finished the run: the started one, or the last a handoff went to (§14). */
    agent: z.string(),
    pending: z.array(PendingApproval),
    usage: Usage,
    iterations: z.number().int().nonnegative(),
    messages: z.array(Message),
  }),
);
/**
 * What a run ends with, or where it waits. `TOutput` is the type of `output`: the final text
 * (`string`), or the value parsed by the agent's `config.output` schema; `agent.run()` gives
 * `RunResult<TOutput>` of its `Agent<TOutput>`, a stored run any JSON unless its handle says.
 */
export type RunResult<TOutput = JsonValue> = Omit<z.infer<typeof RunResult>, "output"> & {
  output: TOutput | null;
};

export const emptyUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

export const addUsage = (total: Usage, more: Usage): Usage => ({
  inputTokens: total.inputTokens + more.inputTokens,
  outputTokens: total.outputTokens + more.outputTokens,
  cacheReadTokens: total.cacheReadTokens + more.cacheReadTokens,
  cacheWriteTokens: total.cacheWriteTokens + more.cacheWriteTokens,
});

/** The text of a message's or response's text blocks, joined. */
export const textOf = (content: readonly ContentBlock[]): string =>
  content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("");
