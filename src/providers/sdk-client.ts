import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { describeIssues } from "../tools/validate.js";

/** The options every SDK-backed provider shares, validated once at construction. */
export const sdkProviderOptions = {
  model: z.string().min(1),
  apiKey: z.string().min(1).optional(),
  baseURL: z.url().optional(),
  maxRetries: z.number().int().nonnegative().optional(),
  name: z.string().min(1).optional(),
};

/** Parses a factory's options; a bad one is a `ConfigError` naming its path (never its value). */
export function parseOptions<T>(schema: z.ZodType<T>, options: unknown, factory: string): T {
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid ${factory} options: ${describeIssues(parsed.error.issues)}`);
  }
  return parsed.data;
}

/** A client given by the caller is used as is; otherwise one is built on the first call. */
export function lazyClient<Client>(
  given: Client | undefined,
  build: () => Promise<Client>,
): () => Promise<Client> {
  let client: Promise<Client> | undefined =
    given === undefined ? undefined : Promise.resolve(given);
  return () => {
    client ??= build();
    return client;
  };
}

/** The API keys a provider must never let out: its option, its client's, its environment's. */
export function secretsOf(...candidates: unknown[]): string[] {
  return candidates.filter(
    (value): value is string => typeof value === "string" && value.length > 0,
  );
}

/** Fails at construction, not at the first call, when no key can be found. */
export function requireKey(hasKey: boolean, factory: string, variable: string): void {
  if (!hasKey) {
    throw new ConfigError(
      `${factory} needs an API key: pass \`apiKey\` or \`client\`, or set ${variable}.`,
    );
  }
}

/** The SDK's per-request options: none without a signal (the SDK does less work then). */
export const requestOptionsOf = (
  signal: AbortSignal | undefined,
): { signal: AbortSignal } | undefined => (signal === undefined ? undefined : { signal });
