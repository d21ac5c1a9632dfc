/** How an OpenAI provider shapes its requests for the server it talks to (SPEC §11.1). */
export interface OpenAIWire {
  /** Merged over every request body. */
  extraBody: Record<string, unknown> | undefined;
  /** Whether `prompt_cache_key` is sent: only OpenAI's own API knows it. */
  promptCacheKey: boolean;
  /** Where Chat Completions requests put `maxTokens`. */
  maxTokensField: "max_completion_tokens" | "max_tokens";
  /** Called when a stream ended without usage: the provider warns once. */
  usageMissing: () => void;
}

export interface OpenAIWireOptions {
  extraBody?: Record<string, unknown> | undefined;
  promptCacheKey?: boolean | undefined;
  maxTokensField?: "max_completion_tokens" | "max_tokens" | undefined;
}

const OPENAI_HOST = /(^|\.)api\.openai\.com$/i;

/** The host of a base URL, or undefined when there is none or it does not parse. */
export function hostOf(baseURL: string | undefined): string | undefined {
  if (baseURL === undefined) return undefined;
  try {
    return new URL(baseURL).hostname;
  } catch {
    return undefined;
  }
}

/** True when requests go to OpenAI's own API (the SDK's default base URL). */
export function isOpenAIHost(baseURL: string | undefined): boolean {
  if (baseURL === undefined) return true;
  try {
    return OPENAI_HOST.test(new URL(baseURL).hostname);
  } catch {
    return false;
  }
}

/**
 * The wire settings of a provider whose client talks to `baseURL` (the client's own when one was
 * given): OpenAI's API gets `max_completion_tokens` and `prompt_cache_key`; any other server
 * `max_tokens` and no cache key, unless the options say otherwise.
 */
export function openAIWire(
  options: OpenAIWireOptions,
  baseURL: string | undefined,
  warn: (message: string) => void,
): OpenAIWire {
  const own = isOpenAIHost(baseURL);
  let warned = false;
  return {
    extraBody: options.extraBody,
    promptCacheKey: options.promptCacheKey ?? own,
    maxTokensField: options.maxTokensField ?? (own ? "max_completion_tokens" : "max_tokens"),
    usageMissing: () => {
      if (warned) return;
      warned = true;
      warn(
        "The server sent no usage with its stream (stream_options.include_usage): its calls count zero tokens.",
      );
    },
  };
}
