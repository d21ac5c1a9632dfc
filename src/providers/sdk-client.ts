import { z } from "zod";
import { ConfigError, HarnessError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import type { ProviderCallOptions } from "../core/provider.js";
import { describeIssues } from "../tools/validate.js";
import { toProviderError } from "./sdk-errors.js";

/** The options every SDK-backed provider shares, validated once at construction. */
export const sdkProviderOptions = lazySchema(() => ({
  model: z.string().min(1),
  apiKey: z.string().min(1).optional(),
  baseURL: z.url().optional(),
  maxRetries: z.number().int().nonnegative().optional(),
  name: z.string().min(1).optional(),
  extraBody: z.record(z.string(), z.unknown()).optional(),
  logger: z
    .custom<ProviderLogger>(
      (value) =>
        typeof value === "object" &&
        value !== null &&
        typeof (value as { warn?: unknown }).warn === "function",
      { message: "expected a logger with a warn method (pino)" },
    )
    .optional(),
}));

/** Where a provider reports what is worth knowing but fails nothing (pino's `warn` fits). */
export interface ProviderLogger {
  warn(object: Record<string, unknown>, message: string): void;
}

/** A provider's warning: to its logger when it has one, else a process warning. */
export const providerWarning =
  (logger: ProviderLogger | undefined, provider: string) =>
  (message: string): void => {
    if (logger !== undefined) logger.warn({ provider }, message);
    else process.emitWarning(message, { code: "HARNESSX_PROVIDER" });
  };

// A server that takes no key (Ollama, vLLM, LM Studio) still gets one: both SDKs need a value.
const NO_KEY = "no-key";

/** Parses a factory's options; a bad one is a `ConfigError` naming its path (never its value). */
export function parseOptions<T>(schema: z.ZodType<T>, options: unknown, factory: string): T {
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid ${factory} options: ${describeIssues(parsed.error.issues)}`);
  }
  return parsed.data;
}

/** What one call of an adapter needs: the SDK client, the call's signal, the key to scrub. */
export interface CallContext<Client> {
  client: Client;
  signal: AbortSignal | undefined;
  secrets: readonly string[];
}

/** The settings of a client the provider builds itself; both SDKs take them as they are. */
export interface ClientSettings {
  apiKey?: string;
  baseURL?: string;
  maxRetries?: number;
}

export interface SdkCallerSetup<Client> {
  /** The factory's name, for errors: "openaiProvider". */
  factory: string;
  /** The API's name, for error messages: "OpenAI". */
  label: string;
  /** The environment variable the SDK reads the key from. */
  variable: string;
  options: {
    apiKey?: string | undefined;
    baseURL?: string | undefined;
    maxRetries?: number | undefined;
    client?: (Client & { apiKey?: unknown }) | undefined;
  };
  /** Loads the SDK (on the first call, so importing harnessx does not) and builds a client. */
  load: (settings: ClientSettings) => Promise<Client>;
}

/**
 * The per-call context of an SDK-backed provider: a client given in the options is used as is;
 * otherwise one is built on the first call. Fails at construction when no key can be found.
 */
export function sdkCaller<Client>(
  setup: SdkCallerSetup<Client>,
): (call: ProviderCallOptions) => Promise<CallContext<Client>> {
  const { options } = setup;
  const envKey = process.env[setup.variable];
  // With a baseURL the server may take no key at all (a local Ollama): the key is optional.
  const keyless = options.client === undefined && options.apiKey === undefined && !envKey;
  if (keyless && options.baseURL === undefined) {
    throw new ConfigError(
      `${setup.factory} needs an API key: pass \`apiKey\` or \`client\`, or set ${setup.variable} (or pass \`baseURL\` for a server that takes none).`,
    );
  }
  const secrets = [options.apiKey, options.client?.apiKey, envKey].filter(
    (value): value is string => typeof value === "string" && value.length > 0,
  );
  let client: Promise<Client> | undefined =
    options.client === undefined ? undefined : Promise.resolve(options.client);
  const build = () =>
    setup.load({
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(keyless ? { apiKey: NO_KEY } : {}),
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    });
  return async (call) => {
    try {
      client ??= build();
      return { client: await client, signal: call.signal, secrets };
    } catch (error) {
      // The SDK not installed is not the model's failure: the run fails with its own code.
      if (HarnessError.isHarnessError(error) && error.code === "dependency_missing") throw error;
      throw toProviderError(error, { provider: setup.label, signal: call.signal, secrets });
    }
  };
}

/** The SDK's per-request options: none without a signal (the SDK does less work then). */
export const requestOptionsOf = (
  signal: AbortSignal | undefined,
): { signal: AbortSignal } | undefined => (signal === undefined ? undefined : { signal });
