import { ProviderError } from "../core/errors.js";
import type {
  ContentBlock,
  ProviderResponse,
  StopReason,
  ToolCall,
  Usage,
} from "../core/values.js";

/** The agent config's default model name: the provider's own `model` is used instead. */
export const DEFAULT_MODEL = "default";

/**
 * The model a request goes to: the agent config's `model` when it names one, else the
 * provider's configured `model` (the config's default is the placeholder "default").
 */
export const chooseModel = (requested: string, configured: string): string =>
  requested === DEFAULT_MODEL || requested === "" ? configured : requested;

/** Both APIs default to temperature 1, and some models reject any other value: send it only when set. */
export const temperatureOf = (temperature: number): { temperature?: number } =>
  temperature === 1 ? {} : { temperature };

/**
 * Tool arguments the model streamed or returned as JSON text, as a tool input object. When the
 * answer was cut by the token limit (`truncated`), arguments that do not parse are an
 * `output_truncated` error naming `maxTokens`, not a malformed answer.
 */
export function parseToolInput(
  provider: string,
  name: string,
  json: string,
  truncated = false,
): Record<string, unknown> {
  if (json.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    if (truncated) throw truncatedCallError(provider, name);
    throw new ProviderError(
      `${provider} returned arguments for tool "${name}" that are not a JSON object.`,
      { phase: "provider", retryable: true },
    );
  }
  return value as Record<string, unknown>;
}

/** A tool call whose arguments the token limit cut off: retrying the same request cannot help. */
export const truncatedCallError = (provider: string, name: string): ProviderError =>
  new ProviderError(
    `${provider} stopped at the token limit inside the arguments of tool "${name}": raise maxTokens (agent config) so that the whole call fits.`,
    { code: "output_truncated", phase: "provider", retryable: false },
  );

const count = (value: number | null | undefined): number =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;

/** Normalised usage: `inputTokens` never includes cached tokens (SPEC §11). */
export const usageOf = (
  inputTokens: number | null | undefined,
  outputTokens: number | null | undefined,
  cacheReadTokens: number | null | undefined,
  cacheWriteTokens: number | null | undefined,
): Usage => ({
  inputTokens: count(inputTokens),
  outputTokens: count(outputTokens),
  cacheReadTokens: count(cacheReadTokens),
  cacheWriteTokens: count(cacheWriteTokens),
});

/**
 * The canonical response. A response carrying tool calls is a `tool_use` turn even when the API
 * said "stop" (Chat Completions does with some models), unless it was cut short.
 */
export function responseOf(
  content: ContentBlock[],
  stopReason: StopReason,
  usage: Usage,
  model: string,
  /** The API's id for the response (`gen_ai.response.id`), when it gave one. */
  id?: string | null | undefined,
): ProviderResponse {
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    if (block.type === "tool_use") {
      toolCalls.push({ id: block.id, name: block.name, input: block.input });
    }
  }
  const stop = toolCalls.length > 0 && stopReason === "end_turn" ? "tool_use" : stopReason;
  return { content, toolCalls, stopReason: stop, usage, model, ...(id ? { id } : {}) };
}
