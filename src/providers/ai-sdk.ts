import type {
  LanguageModelV2,
  LanguageModelV2StreamPart,
  LanguageModelV3,
  LanguageModelV3StreamPart,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import { ConfigError } from "../core/errors.js";
import type {
  Provider,
  ProviderCallOptions,
  ProviderRequest,
  ProviderStreamEvent,
} from "../core/provider.js";
import type { ProviderResponse } from "../core/values.js";
import { callOptionsOf } from "./ai-sdk-prompt.js";
import { type AnswerPart, contentFrom, errorFrom, stopFrom, usageFrom } from "./ai-sdk-result.js";
import { responseOf } from "./response-parts.js";
import { streamCutError } from "./sdk-errors.js";

/** A Vercel AI SDK language model (`@ai-sdk/provider`), specification "v2" or "v3". */
export type AiSdkLanguageModel = LanguageModelV2 | LanguageModelV3;

export interface AiSdkProviderOptions {
  /** Sent with every call as the model's `providerOptions` (e.g. `{ openai: { reasoningEffort: "low" } }`). */
  providerOptions?: SharedV3ProviderOptions;
  /** @defaultValue the model's `provider` ("openai.chat", "google.generative-ai"…) */
  name?: string;
}

const SPECIFICATIONS = new Set(["v2", "v3"]);

type StreamPart = LanguageModelV2StreamPart | LanguageModelV3StreamPart;

/**
 * Any Vercel AI SDK language model as a harnessx provider: `complete` through `doGenerate`,
 * `stream` through `doStream`. It reads `@ai-sdk/provider`'s types only: no AI SDK code is
 * loaded by harnessx.
 *
 * @example
 * import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
 * const groq = createOpenAICompatible({ name: "groq", baseURL: "https://api.groq.com/openai/v1", apiKey });
 * const agent = new Agent({ provider: aiSdkProvider(groq("llama-3.3-70b-versatile")) });
 */
export function aiSdkProvider(
  model: AiSdkLanguageModel,
  options: AiSdkProviderOptions = {},
): Provider {
  const version = (model as { specificationVersion?: unknown } | null)?.specificationVersion;
  if (typeof version !== "string" || !SPECIFICATIONS.has(version)) {
    throw new ConfigError(
      `aiSdkProvider needs an AI SDK language model of specification "v2" or "v3" (got ${JSON.stringify(version ?? null)}).`,
    );
  }
  const label = model.provider;
  // Both specifications take the same call options; only the results' shapes differ.
  const callable = model as LanguageModelV3;
  const context = (signal: AbortSignal | undefined) => ({ provider: label, signal, secrets: [] });

  return {
    name: options.name ?? model.provider,
    model: model.modelId,
    async complete(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): Promise<ProviderResponse> {
      try {
        const result = await callable.doGenerate(
          callOptionsOf(request, options.providerOptions, call.signal),
        );
        const stop = stopFrom(result.finishReason, label);
        return responseOf(
          contentFrom(result.content as AnswerPart[], label, stop === "max_tokens"),
          stop,
          usageFrom(result.usage),
          result.response?.modelId ?? model.modelId,
          result.response?.id,
        );
      } catch (error) {
        throw errorFrom(error, context(call.signal));
      }
    },
    async *stream(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): AsyncIterable<ProviderStreamEvent> {
      try {
        const { stream } = await callable.doStream(
          callOptionsOf(request, options.providerOptions, call.signal),
        );
        yield* streamed(stream as ReadableStream<StreamPart>, model.modelId, label);
        call.signal?.throwIfAborted();
      } catch (error) {
        throw errorFrom(error, context(call.signal));
      }
    },
  };
}

type OpenPart =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; providerMetadata: Record<string, unknown> };

/**
 * Deltas as the model streams them, then the response: text and reasoning assembled by part id
 * (reasoning metadata merged from its start, deltas and end), tool calls from their final
 * `tool-call` part, usage and finish reason from `finish`.
 */
async function* streamed(
  stream: ReadableStream<StreamPart>,
  modelId: string,
  label: string,
): AsyncGenerator<ProviderStreamEvent> {
  const parts: Array<OpenPart | AnswerPart> = [];
  const open = new Map<string, OpenPart>();
  let finish: Extract<StreamPart, { type: "finish" }> | undefined;
  let model = modelId;
  let id: string | undefined;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case "text-start":
        case "reasoning-start": {
          const opened: OpenPart =
            part.type === "text-start"
              ? { type: "text", text: "" }
              : { type: "reasoning", text: "", providerMetadata: { ...part.providerMetadata } };
          open.set(`${part.type}:${part.id}`, opened);
          parts.push(opened);
          break;
        }
        case "text-delta": {
          const target = open.get(`text-start:${part.id}`);
          if (target !== undefined) target.text += part.delta;
          else parts.push({ type: "text", text: part.delta });
          yield { type: "text_delta", text: part.delta };
          break;
        }
        case "reasoning-delta":
        case "reasoning-end": {
          const target = open.get(`reasoning-start:${part.id}`);
          if (target?.type === "reasoning") {
            if (part.type === "reasoning-delta") target.text += part.delta;
            Object.assign(target.providerMetadata, part.providerMetadata);
          }
          if (part.type === "reasoning-delta" && part.delta !== "") {
            yield { type: "thinking_delta", text: part.delta };
          }
          break;
        }
        case "tool-call":
          parts.push(part);
          break;
        case "response-metadata":
          if (part.modelId) model = part.modelId;
          if (part.id) id = part.id;
          break;
        case "finish":
          finish = part;
          break;
        case "error":
          throw part.error;
        default:
          break;
      }
    }
  } finally {
    reader.releaseLock();
  }
  if (finish === undefined) throw streamCutError(label);
  const stop = stopFrom(finish.finishReason, label);
  yield {
    type: "response",
    response: responseOf(
      contentFrom(parts as AnswerPart[], label, stop === "max_tokens"),
      stop,
      usageFrom(finish.usage),
      model,
      id,
    ),
  };
}
