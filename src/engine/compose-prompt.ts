import type { PromptProvider } from "../extensions/extension.js";

export type { PromptProvider };

/** The rendered system prompt: the configured prompt, then each provider's non-empty text. */
export async function composeSystemPrompt(
  base: string,
  providers: readonly PromptProvider[],
  run: { runId: string; sessionId: string },
): Promise<string> {
  if (providers.length === 0) return base;
  const parts = base === "" ? [] : [base];
  for (const provide of providers) {
    const text = await provide(run);
    if (text) parts.push(text);
  }
  return parts.join("\n\n");
}
