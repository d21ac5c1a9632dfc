import { z } from "zod";
import { ConfigError } from "../../core/errors.js";
import { lazySchema } from "../../core/lazy-schema.js";
import { path } from "../../core/node-builtins.js";
import { describeIssues } from "../../tools/validate.js";

/** Where a sandbox runs programs: limits only, or Linux namespaces through `bwrap`. */
export const SandboxTier = lazySchema(() => z.enum(["process", "bubblewrap"]));
export type SandboxTier = z.infer<typeof SandboxTier>;

/** The languages `Sandbox.execute` runs. */
export const SandboxLanguage = lazySchema(() => z.enum(["javascript", "bash", "python"]));
export type SandboxLanguage = z.infer<typeof SandboxLanguage>;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Configuration of a `Sandbox`; only `cwd` is required. */
export const SandboxConfig = lazySchema(() =>
  z.strictObject({
    /**
     * `"auto"` picks `bubblewrap` when a working `bwrap` is found, else `process`.
     * `"bubblewrap"` without a working `bwrap` is a `SandboxUnavailableError`.
     * @defaultValue "auto"
     */
    tier: z.enum(["process", "bubblewrap", "auto"]).default("auto"),
    /** The work folder: programs start there, and under bubblewrap it is the only writable host folder. */
    cwd: z.string().min(1),
    /** Wall-clock limit per call; the whole process group is killed past it. @defaultValue 30000 */
    timeoutMs: z.number().int().positive().default(30_000),
    /** Bytes kept of stdout and of stderr each; the rest is cut and marked. @defaultValue 1000000 */
    maxOutputBytes: z.number().int().positive().default(1_000_000),
    /** The only variables passed besides PATH, HOME and LANG (which these override). @defaultValue {} */
    env: z
      .record(z.string().regex(ENV_NAME, "not a variable name"), z.string().regex(/^[^\0]*$/))
      .default({}),
    /** The `bwrap` executable. @defaultValue the first `bwrap` on this process's PATH */
    bwrapPath: z.string().min(1).optional(),
  }),
);
export type SandboxConfig = z.input<typeof SandboxConfig>;
export type ResolvedSandboxConfig = z.output<typeof SandboxConfig>;

/** Parses a sandbox configuration; `cwd` becomes absolute. */
export function parseSandboxConfig(config: unknown): ResolvedSandboxConfig {
  const parsed = SandboxConfig.safeParse(config);
  if (!parsed.success) {
    throw new ConfigError(`Invalid sandbox config: ${describeIssues(parsed.error.issues)}`);
  }
  return { ...parsed.data, cwd: path.resolve(parsed.data.cwd) };
}
