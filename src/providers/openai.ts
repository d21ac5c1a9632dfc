import type OpenAI from "openai";
import { z } from "zod";
import type {
  Provider,
  ProviderCallOptions,
  ProviderRequest,
  ProviderStreamEvent,
} from "../core/provider.js";
import type { ProviderResponse } from "../core/values.js";
import { chatParams, completeChat, streamChat } from "./openai-chat.js";
import {
  type CallContext,
  completeResponses,
  responsesParams,
  streamResponses,
} from "./openai-responses.js";
import { chooseModel } from "./response-parts.js";
import {
  lazyClient,
  parseOptions,
  requireKey,
  sdkProviderOptions,
  secretsOf,
} from "./sdk-client.js";
import { toProviderError } from "./sdk-errors.js";

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
  const envKey = process.env.OPENAI_API_KEY;
  requireKey(
    parsed.client !== undefined || parsed.apiKey !== undefined || Boolean(envKey),
    "openaiProvider",
    "OPENAI_API_KEY",
  );
  const secrets = secretsOf(parsed.apiKey, parsed.client?.apiKey, envKey);
  const client = lazyClient(parsed.client, async () => {
    const { default: OpenAIClient } = await import("openai");
    return new OpenAIClient({
      ...(parsed.apiKey === undefined ? {} : { apiKey: parsed.apiKey }),
      ...(parsed.baseURL === undefined ? {} : { baseURL: parsed.baseURL }),
      ...(parsed.maxRetries === undefined ? {} : { maxRetries: parsed.maxRetries }),
    });
  });
  const chat = parsed.api === "chat";

  const context = async (call: ProviderCallOptions): Promise<CallContext> => {
    try {
      return { client: await client(), signal: call.signal, secrets };
    } catch (error) {
      throw toProviderError(error, { provider: "OpenAI", signal: call.signal, secrets });
    }
  };

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
