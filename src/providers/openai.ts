import type OpenAI from "openai";
import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import type {
  Provider,
  ProviderCallOptions,
  ProviderRequest,
  ProviderStreamEvent,
} from "../core/provider.js";
import type { ProviderResponse } from "../core/values.js";
import { loadOpenAI } from "./load-openai.js";
import { chatParams, completeChat, streamChat } from "./openai-chat.js";
import { completeResponses, responsesParams, streamResponses } from "./openai-responses.js";
import { hostOf, openAIWire } from "./openai-wire.js";
import { chooseModel } from "./response-parts.js";
import {
  type ProviderLogger,
  parseOptions,
  providerWarning,
  sdkCaller,
  sdkProviderOptions,
} from "./sdk-client.js";

export interface OpenAIProviderOptions {
  /**
   * The model to call, e.g. `"gpt-5-mini"`. An agent config naming a model other than
   * `"default"` overrides it per request.
   */
  model: string;
  /** A configured `OpenAI` client (its own retries, timeout, fetch); built from the options below when absent. */
  client?: OpenAI;
  /** @defaultValue `process.env.OPENAI_API_KEY` */
  apiKey?: string;
  /** @defaultValue the SDK's (`https://api.openai.com/v1`) */
  baseURL?: string;
  /** The SDK's retries of the client built here. @defaultValue the SDK's (2) */
  maxRetries?: number;
  /** @defaultValue "responses" */
  api?: "responses" | "chat";
  /** @defaultValue "openai" */
  name?: string;
  /**
   * Fields merged into every request body, over harnessx's own: reasoning effort, `tool_choice`,
   * `parallel_tool_calls`, `store`, `service_tier`, `metadata`, a server's own options…
   */
  extraBody?: Record<string, unknown>;
  /**
   * Send the run's prefix key as `prompt_cache_key`. @defaultValue true on OpenAI's own API only
   * (other servers may answer 400 to a field they do not know)
   */
  promptCacheKey?: boolean;
  /**
   * Where Chat Completions requests put `maxTokens`. @defaultValue "max_completion_tokens" on
   * OpenAI's own API, "max_tokens" elsewhere (Ollama, vLLM… read only that one)
   */
  maxTokensField?: "max_completion_tokens" | "max_tokens";
  /** Where the provider warns (e.g. a server that sends no usage). @defaultValue process warnings */
  logger?: ProviderLogger;
}

const Options = lazySchema(() =>
  z
    .object({
      ...sdkProviderOptions,
      client: z
        .custom<OpenAI>(
          (value) =>
            typeof value === "object" && value !== null && "responses" in value && "chat" in value,
          { message: "expected an OpenAI client (new OpenAI())" },
        )
        .optional(),
      api: z.enum(["responses", "chat"]).default("responses"),
      promptCacheKey: z.boolean().optional(),
      maxTokensField: z.enum(["max_completion_tokens", "max_tokens"]).optional(),
    })
    .strict(),
);

/**
 * A provider on OpenAI's official SDK: the Responses API by default, Chat Completions with
 * `api: "chat"`. The SDK is loaded on the first call, so importing harnessx does not pay for it.
 *
 * @example
 * const agent = new Agent({ provider: openaiProvider({ model: "gpt-5-mini" }) });
 */
export function openaiProvider(options: OpenAIProviderOptions): Provider {
  const parsed = parseOptions(Options, options, "openaiProvider");
  const context = sdkCaller<OpenAI>({
    factory: "openaiProvider",
    label: "OpenAI",
    variable: "OPENAI_API_KEY",
    options: parsed,
    load: async (settings) => {
      const { default: OpenAIClient } = await loadOpenAI();
      return new OpenAIClient(settings);
    },
  });
  const chat = parsed.api === "chat";
  const name = parsed.name ?? "openai";
  const clientURL = (parsed.client as { baseURL?: unknown } | undefined)?.baseURL;
  const baseURL =
    typeof clientURL === "string"
      ? clientURL
      : (parsed.baseURL ?? (process.env.OPENAI_BASE_URL || undefined));
  const wire = openAIWire(parsed, baseURL, providerWarning(parsed.logger, name));

  return {
    name,
    model: parsed.model,
    serverAddress: hostOf(baseURL) ?? "api.openai.com",
    async complete(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): Promise<ProviderResponse> {
      const model = chooseModel(request.model, parsed.model);
      return chat
        ? completeChat(chatParams(request, model, wire), await context(call))
        : completeResponses(responsesParams(request, model, wire), await context(call));
    },
    async *stream(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): AsyncIterable<ProviderStreamEvent> {
      const model = chooseModel(request.model, parsed.model);
      yield* chat
        ? streamChat(chatParams(request, model, wire), await context(call), wire)
        : streamResponses(responsesParams(request, model, wire), await context(call));
    },
  };
}
