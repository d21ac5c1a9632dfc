import type { z } from "zod";
import { ConfigError } from "../core/errors.js";
import type { HookEvent } from "../hooks/events.js";
import type { HookPayloads } from "../hooks/payloads.js";
import type { Tool } from "../tools/tool.js";
import { describeIssues } from "../tools/validate.js";

/** Emits a hook event through the agent's HookRegistry. */
export type EmitHook = <E extends HookEvent>(event: E, data: HookPayloads[E]) => Promise<void>;

/** What a feature adds to an agent: tools, and optionally a section of the system prompt. */
export interface FeatureParts {
  tools: Tool<unknown>[];
  promptProvider?: () => string;
}

/** Parses an agent option once; a failure is a ConfigError naming each bad path. */
export function parseOption<T>(schema: z.ZodType<T>, value: unknown, option: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ConfigError(`Invalid ${option}: ${describeIssues(parsed.error.issues)}`);
  }
  return parsed.data;
}
