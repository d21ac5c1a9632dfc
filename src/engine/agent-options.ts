import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { ExtensionShape } from "../extensions/extension-manager.js";
import { describeIssues } from "../tools/validate.js";

/**
 * Every option `new Agent({...})` accepts. Anything else is refused with a `ConfigError`, never
 * ignored: add a new option's name here when adding it to `AgentOptions`.
 */
export const AGENT_OPTION_NAMES = [
  "provider",
  "config",
  "tools",
  "middleware",
  "hooks",
  "permissions",
  "extensions",
  "sandbox",
  "skills",
  "knowledge",
  "mcp",
  "recorder",
  "logger",
  "approvalKey",
  "deps",
  "handoffs",
] as const;

const isFunction = (value: unknown) => typeof value === "function";

/** Shapes of the options this file owns; the others are checked where they are used. */
const CheckedOptions = lazySchema(() =>
  z.object({
    extensions: z.array(ExtensionShape.loose()).optional(),
    recorder: z
      .object({ record: z.custom<unknown>(isFunction, "must be a function") })
      .loose()
      .optional(),
    handoffs: z
      .array(
        z
          .object({ name: z.string(), runEnv: z.custom<unknown>(isFunction, "must be an Agent") })
          .loose(),
      )
      .optional(),
  }),
);

/** Throws a `ConfigError` naming each unknown option, or each option of the wrong shape. */
export function checkAgentOptions(options: object): void {
  const known: readonly string[] = AGENT_OPTION_NAMES;
  const unknown = Object.keys(options).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new ConfigError(
      `Unknown Agent option${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")} (known: ${known.join(", ")}).`,
    );
  }
  const parsed = CheckedOptions.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid Agent options: ${describeIssues(parsed.error.issues)}`);
  }
}
