import type { Logger } from "pino";
import { z } from "zod";
import { ConfigError } from "../../core/errors.js";
import type { HookRegistry } from "../../hooks/registry.js";
import { type Tool, tool } from "../../tools/tool.js";
import { Sandbox, type SandboxResult } from "./sandbox.js";

/** What an agent lends its sandbox: its hooks (whose `ctx.agent` is the agent) and logger. */
export interface SandboxLender<A> {
  readonly hooks: HookRegistry<A>;
  readonly logger: Logger;
}

/**
 * The tools an agent built with `sandbox` registers (the `bash` tool), after lending the
 * sandbox its hooks when it has none. No sandbox, no tools.
 */
export function sandboxTools<A extends SandboxLender<A>>(
  sandbox: unknown,
  agent: A,
): Tool<unknown>[] {
  if (sandbox === undefined) return [];
  if (!(sandbox instanceof Sandbox)) {
    throw new ConfigError("sandbox: expected a Sandbox, as in `new Sandbox({ cwd })`");
  }
  sandbox.lendHooks(agent.hooks, agent, agent.logger);
  return [bashTool(sandbox) as Tool<unknown>];
}

/**
 * `bash` ({ command }): runs the command line in the sandbox and answers its exit code, stdout
 * and stderr. A non-zero exit is an ordinary result (grep, diff and test answer with it); a
 * timeout, or a command that could not start, is an error result.
 */
export function bashTool(sandbox: Sandbox): Tool<{ command: string }> {
  return tool({
    name: "bash",
    description:
      "Run a bash command line in the sandbox's work folder and return its exit code, stdout " +
      "and stderr. Nothing keeps running after the call; long commands are killed at the timeout.",
    input: z.object({ command: z.string().min(1).describe("The command line, run by bash -c.") }),
    handler: async ({ command }, context) => {
      const result = await sandbox.executeCommand(command, { signal: context.signal });
      const report = describeResult(result);
      if (result.timedOut) {
        throw new Error(
          `The command timed out after ${sandbox.config.timeoutMs} ms and was killed.\n${report}`,
        );
      }
      return report;
    },
    // Shell commands are rarely safe to repeat: a call cut short by a crash is reported, not rerun.
    recovery: "fail",
  });
}

/** The result as the model reads it: the exit code, then each non-empty stream. */
export function describeResult(result: SandboxResult): string {
  const lines = [`exit code: ${result.exitCode ?? "none (killed by a signal)"}`];
  if (result.stdout !== "") lines.push(`stdout:\n${result.stdout}`);
  if (result.stderr !== "") lines.push(`stderr:\n${result.stderr}`);
  return lines.join("\n");
}
