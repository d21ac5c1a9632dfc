import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import type {
  Provider,
  ProviderCallOptions,
  ProviderRequest,
  ProviderStreamEvent,
} from "../core/provider.js";
import type { ProviderResponse } from "../core/values.js";
import { answerFromFinalTool } from "./anthropic-final-tool.js";
import { completeMessages, messagesParams, streamMessages } from "./anthropic-messages.js";
import { loadAnthropic } from "./load-anthropic.js";
import { hostOf } from "./openai-wire.js";
import { chooseModel } from "./response-parts.js";
import { type ProviderLogger, parseOptions, sdkCaller, sdkProviderOptions } from "./sdk-client.js";

export interface AnthropicProviderOptions {
  /**
   * The model to call, e.g. `"claude-sonnet-4-5"`. An agent config naming a model other than
   * `"default"` overrides it per request.
   */
  model: string;
  /** A configured `Anthropic` client (its own retries, timeout, fetch); built from the options below when absent. */
  client?: Anthropic;
  /** @defaultValue `process.env.ANTHROPIC_API_KEY` */
  apiKey?: string;
  /** @defaultValue the SDK's (`https://api.anthropic.com`) */
  baseURL?: string;
  /** The SDK's retries of the client built here. @defaultValue the SDK's (2) */
  maxRetries?: number;
  /** @defaultValue "anthropic" */
  name?: string;
  /**
   * Fields merged into every request body, over harnessx's own: `thinking`, `tool_choice`,
   * `metadata`, `service_tier`…
   */
  extraBody?: Record<string, unknown>;
  /** Where the provider warns. @defaultValue process warnings */
  logger?: ProviderLogger;
}

const Options = lazySchema(() =>
  z
    .object({
      ...sdkProviderOptions,
      client: z
        .custom<Anthropic>(
          (value) => typeof value === "object" && value !== null && "messages" in value,
          { message: "expected an Anthropic client (new Anthropic())" },
        )
        .optional(),
    })
    .strict(),
);

// The base URL requests go to: the given client's, the option, or the SDK's environment variable.
const anthropicBaseURL = (options: { client?: unknown; baseURL?: string | undefined }) => {
  const clientURL = (options.client as { baseURL?: unknown } | undefined)?.baseURL;
  return typeof clientURL === "string"
    ? clientURL
    : (options.baseURL ?? (process.env.ANTHROPIC_BASE_URL || undefined));
};

/**
 * A provider on Anthropic's official SDK (the Messages API). With prompt caching on, the tools and
 * the system prompt carry cache breakpoints. The SDK is loaded on the first call.
 *
 * @example
 * const agent = new Agent({ provider: anthropicProvider({ model: "claude-sonnet-4-5" }) });
 */
export function anthropicProvider(options: AnthropicProviderOptions): Provider {
  const parsed = parseOptions(Options, options, "anthropicProvider");
  const context = sdkCaller<Anthropic>({
    factory: "anthropicProvider",
    label: "Anthropic",
    variable: "ANTHROPIC_API_KEY",
    options: parsed,
    load: async (settings) => {
      const { default: AnthropicClient } = await loadAnthropic();
      return new AnthropicClient(settings);
    },
  });

  return {
    name: parsed.name ?? "anthropic",
    model: parsed.model,
    serverAddress: hostOf(anthropicBaseURL(parsed)) ?? "api.anthropic.com",
    async complete(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): Promise<ProviderResponse> {
      const params = messagesParams(
        request,
        chooseModel(request.model, parsed.model),
        parsed.extraBody,
      );
      return answerFromFinalTool(
        await completeMessages(params, await context(call)),
        request.output,
      );
    },
    stream(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): AsyncIterable<ProviderStreamEvent> {
      const prepare = async () => ({
        params: messagesParams(request, chooseModel(request.model, parsed.model), parsed.extraBody),
        context: await context(call),
      });
      return streamMessages(prepare, request.output);
    },
  };
}
