import type { Provider } from "../core/provider.js";
import { anthropicProvider } from "../providers/anthropic.js";
import { loadAnthropic } from "../providers/load-anthropic.js";
import { loadOpenAI } from "../providers/load-openai.js";
import { openaiProvider } from "../providers/openai.js";

/** A `--provider` / `--model` combination that cannot be used; the CLI exits with code 2. */
export class ProviderFlagError extends Error {}

const PROVIDERS = {
  openai: {
    variable: "OPENAI_API_KEY",
    model: "gpt-5-mini",
    make: openaiProvider,
    load: loadOpenAI,
  },
  anthropic: {
    variable: "ANTHROPIC_API_KEY",
    model: "claude-sonnet-4-5",
    make: anthropicProvider,
    load: loadAnthropic,
  },
} as const;

/**
 * Loads the SDK of `--provider` before any run: without the package the command fails at once
 * with `DependencyMissingError` (its message names the `npm install`; exit code 1), not run by run.
 */
export async function loadProviderSdk(flags: { provider?: string | undefined }): Promise<void> {
  if (flags.provider === "openai" || flags.provider === "anthropic") {
    await PROVIDERS[flags.provider].load();
  }
}

/**
 * The real model `--provider openai|anthropic` names (with `--model`, or a small default), keyed
 * by its environment variable; `undefined` (the scripted model) without `--provider`.
 */
export function providerFromFlags(
  flags: { provider?: string | undefined; model?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Provider | undefined {
  if (flags.provider === undefined) {
    if (flags.model !== undefined)
      throw new ProviderFlagError("--model needs --provider openai|anthropic");
    return undefined;
  }
  if (flags.provider !== "openai" && flags.provider !== "anthropic") {
    throw new ProviderFlagError(`--provider must be openai or anthropic, got "${flags.provider}"`);
  }
  const choice = PROVIDERS[flags.provider];
  const apiKey = env[choice.variable];
  if (apiKey === undefined || apiKey === "") {
    throw new ProviderFlagError(
      `--provider ${flags.provider} needs ${choice.variable} set to an API key`,
    );
  }
  return choice.make({ model: flags.model ?? choice.model, apiKey });
}
