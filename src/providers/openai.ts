import type OpenAI from "openai";
import { z } from "zod";
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
import { chooseModel } from "./response-parts.js";
import { parseOptions, sdkCaller, sdkProviderOptions } from "./sdk-client.js";

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
}

const Options = z
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
  })
  .strict();

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

  return {
    name: parsed.name ?? "openai",
    async complete(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): Promise<ProviderResponse> {
      const model = chooseModel(request.model, parsed.model);
      return chat
        ? completeChat(chatParams(request, model), await context(call))
        : completeResponses(responsesParams(request, model), await context(call));
    },
    async *stream(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): AsyncIterable<ProviderStreamEvent> {
      const model = chooseModel(request.model, parsed.model);
      yield* chat
        ? streamChat(chatParams(request, model), await context(call))
        : streamResponses(responsesParams(request, model), await context(call));
    },
  };
}
