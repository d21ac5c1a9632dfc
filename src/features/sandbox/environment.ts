/** The PATH a sandboxed program gets unless `env.PATH` says otherwise. */
export const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The whole environment of a sandboxed program: nothing of this process's environment (its
 * secrets included), only minimal PATH, HOME (the work folder) and LANG, then `env`.
 */
export function sandboxEnvironment(
  cwd: string,
  env: Readonly<Record<string, string>>,
): Record<string, string> {
  return { PATH: DEFAULT_PATH, HOME: cwd, LANG: "C.UTF-8", ...env };
}
