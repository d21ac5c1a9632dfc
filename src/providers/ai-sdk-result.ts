import type {
  LanguageModelV2FinishReason,
  LanguageModelV2Usage,
  LanguageModelV3FinishReason,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { HarnessError, ProviderError } from "../core/errors.js";
import type { ContentBlock, JsonValue, StopReason, Usage } from "../core/values.js";
import { parseToolInput, usageOf } from "./response-parts.js";
import {
  codeForStatus,
  retryAfterMs,
  type SdkErrorContext,
  scrub,
  toProviderError,
} from "./sdk-errors.js";

/** Usage of either specification: v3's nested counts, or v2's flat ones (input includes cached). */
export function usageFrom(usage: LanguageModelV2Usage | LanguageModelV3Usage | undefined): Usage {
  if (usage === undefined) return usageOf(0, 0, 0, 0);
  if (typeof usage.inputTokens === "object" && usage.inputTokens !== null) {
    const v3 = usage as LanguageModelV3Usage;
    const read = v3.inputTokens.cacheRead ?? 0;
    const written = v3.inputTokens.cacheWrite ?? 0;
    const fresh = v3.inputTokens.noCache ?? (v3.inputTokens.total ?? 0) - read - written;
    return usageOf(fresh, v3.outputTokens.total, read, written);
  }
  const v2 = usage as LanguageModelV2Usage;
  const cached = v2.cachedInputTokens ?? 0;
  return usageOf((v2.inputTokens ?? 0) - cached, v2.outputTokens, cached, 0);
}

const STOP_REASONS: Record<string, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  "content-filter": "refusal",
  "tool-calls": "tool_use",
};

/** The canonical stop reason of a v2 (a string) or v3 (`{ unified, raw }`) finish reason. */
export function stopFrom(
  reason: LanguageModelV2FinishReason | LanguageModelV3FinishReason | undefined,
  provider: string,
): StopReason {
  const unified = typeof reason === "object" && reason !== null ? reason.unified : reason;
  if (unified === "error") {
    throw new ProviderError(`${provider} finished its answer with an error.`, {
      code: "unavailable",
      phase: "provider",
    });
  }
  return STOP_REASONS[unified ?? "stop"] ?? "end_turn";
}

/** A content part's provider metadata, kept as a thinking block's `providerData`. */
export const metadataOf = (metadata: unknown): { providerData?: JsonValue } =>
  typeof metadata === "object" && metadata !== null && Object.keys(metadata).length > 0
    ? { providerData: metadata as JsonValue }
    : {};

/** One part of a model's answer, in either specification's shape. */
export type AnswerPart =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; providerMetadata?: unknown }
  | {
      type: "tool-call";
      toolCallId: string;
      toolName: string;
      input: string;
      providerExecuted?: boolean;
    }
  | { type: string };

/** The canonical content of a model's answer; calls the provider ran itself are not ours to run. */
export function contentFrom(
  parts: readonly AnswerPart[],
  provider: string,
  truncated: boolean,
): ContentBlock[] {
  const content: ContentBlock[] = [];
  for (const part of parts) {
    if (part.type === "text" && "text" in part) {
      if (part.text !== "") content.push({ type: "text", text: part.text });
    } else if (part.type === "reasoning" && "text" in part) {
      content.push({ type: "thinking", text: part.text, ...metadataOf(part.providerMetadata) });
    } else if (
      part.type === "tool-call" &&
      "toolCallId" in part &&
      part.providerExecuted !== true
    ) {
      content.push({
        type: "tool_use",
        id: part.toolCallId,
        name: part.toolName,
        input: parseToolInput(provider, part.toolName, part.input, truncated),
      });
    }
  }
  return content;
}

// `APICallError` of any copy of @ai-sdk/provider, known by the marker every AI SDK error sets.
interface ApiCallErrorFields {
  statusCode?: unknown;
  responseHeaders?: unknown;
  isRetryable?: unknown;
  message?: unknown;
}
const API_CALL_ERROR = Symbol.for("vercel.ai.error.AI_APICallError");

const isApiCallError = (error: unknown): error is ApiCallErrorFields =>
  typeof error === "object" &&
  error !== null &&
  (API_CALL_ERROR in error || (error as { name?: unknown }).name === "AI_APICallError");

/**
 * A `ProviderError` for anything an AI SDK model threw: an `APICallError` by its status (with
 * `retry-after`), anything else as the official SDKs' errors are; never the error object itself.
 */
export function errorFrom(error: unknown, context: SdkErrorContext): ProviderError {
  if (HarnessError.isHarnessError(error) || !isApiCallError(error)) {
    return toProviderError(error, context);
  }
  const status = typeof error.statusCode === "number" ? error.statusCode : undefined;
  if (status === undefined || context.signal?.aborted === true) {
    return toProviderError(error, context);
  }
  const message = scrub(typeof error.message === "string" ? error.message : "", context.secrets);
  const code = codeForStatus(status, [], message);
  const headers =
    typeof error.responseHeaders === "object" && error.responseHeaders !== null
      ? new Headers(error.responseHeaders as Record<string, string>)
      : undefined;
  const wait = retryAfterMs(headers);
  return new ProviderError(`${context.provider} request failed (${code}): ${message}`, {
    code,
    phase: "provider",
    cause: { name: "APICallError", message, status },
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  });
}
