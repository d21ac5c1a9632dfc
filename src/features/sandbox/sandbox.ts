import type { Logger } from "pino";
import { defaultLogger } from "../../core/default-logger.js";
import { ConfigError } from "../../core/errors.js";
import { fsPromises } from "../../core/node-builtins.js";
import { HookEvent } from "../../hooks/events.js";
import type { SandboxExecData } from "../../hooks/payloads.js";
import { emitHook, type HookRegistry } from "../../hooks/registry.js";
import type { ToolSandbox } from "../../tools/tool-sandbox.js";
import { bubblewrapArgs, readSystemLayout, supportsDisableUserns } from "./bubblewrap.js";
import {
  parseSandboxConfig,
  type ResolvedSandboxConfig,
  type SandboxConfig,
  SandboxLanguage,
  type SandboxTier,
} from "./config.js";
import { sandboxEnvironment } from "./environment.js";
import { SandboxError, SandboxUnavailableError } from "./errors.js";
import { findExecutable, isExecutable } from "./executables.js";
import { type ContainmentTools, containedCommand } from "./process-containment.js";
import { type ProcessOutcome, runProcess } from "./run-process.js";

export interface SandboxOptions {
  /** Receives `SANDBOX_EXEC` after every call. An agent lends its own to a sandbox without. */
  hooks?: HookRegistry;
  /** @defaultValue pino on stderr at level `HARNESSX_LOG_LEVEL` or "warn", secret-named fields redacted */
  logger?: Logger;
}

export interface SandboxExecuteOptions {
  language: SandboxLanguage;
  /** Aborting kills the program, as the timeout does. */
  signal?: AbortSignal;
}

export interface SandboxCommandOptions {
  /** Aborting kills the command, as the timeout does. */
  signal?: AbortSignal;
}

/** What one call produced. */
export interface SandboxResult {
  stdout: string;
  stderr: string;
  /** `null` when the program ended by a signal (killed at the timeout, for one). */
  exitCode: number | null;
  timedOut: boolean;
  executionTimeMs: number;
}

type Kind = SandboxExecData["kind"];

const isRoot = () => process.getuid?.() === 0;

// Exits 0 when the program holds no effective capability, else 1 saying so (bash builtins only).
const NO_CAPABILITIES_CHECK = [
  "while read -r key value; do",
  '  if [ "$key" = CapEff: ]; then',
  '    [ "$((16#$value))" -eq 0 ] && exit 0',
  '    echo "capabilities remain inside the sandbox (CapEff $value)" >&2; exit 1',
  "  fi",
  "done < /proc/self/status",
  'echo "CapEff not found in /proc/self/status" >&2; exit 1',
].join("\n");

/**
 * Runs code and shell commands under limits: a wall-clock timeout, capped output, a work folder
 * and an environment with none of this process's variables. In both tiers the program runs in
 * a PID namespace of its own, so nothing it starts (a `setsid` daemon included) outlives the
 * call, and this process's environment cannot be read from inside. The `process` tier is limits
 * only, not a security boundary; the `bubblewrap` tier adds a user namespace where the program
 * is `nobody` with no capability, no network, read-only system folders and only the work folder
 * writable, whether harnessx runs as root or not.
 * @example
 * const sandbox = new Sandbox({ cwd: "./work" });
 * const { stdout } = await sandbox.execute("print(1 + 1)", { language: "python" });
 */
export class Sandbox implements ToolSandbox {
  readonly config: ResolvedSandboxConfig;
  #hooks: HookRegistry | undefined;
  #hookAgent: unknown;
  #logger: Logger | undefined;
  readonly #bwrapPath: string | undefined;
  #tier: Promise<SandboxTier> | undefined;
  // Settled with the tier from `bwrap --version`.
  #disableUserns = false;
  readonly #containment: ContainmentTools | undefined;
  // Settled with the process tier: whether its programs run in a PID namespace of their own.
  #contained = false;

  constructor(config: SandboxConfig, options: SandboxOptions = {}) {
    this.config = parseSandboxConfig(config);
    this.#hooks = options.hooks;
    this.#logger = options.logger;
    const searchPath = `${process.env.PATH ?? ""}:/usr/bin:/bin`;
    this.#bwrapPath = this.config.bwrapPath ?? findExecutable("bwrap", searchPath);
    const unshare = findExecutable("unshare", searchPath);
    this.#containment =
      unshare === undefined
        ? undefined
        : { unshare, setpriv: findExecutable("setpriv", searchPath) };
    if (this.config.tier === "bubblewrap") {
      if (this.#bwrapPath === undefined || !isExecutable(this.#bwrapPath)) {
        throw new SandboxUnavailableError(
          `The bubblewrap tier needs bwrap, and ${
            this.#bwrapPath === undefined
              ? "none is on PATH"
              : `"${this.#bwrapPath}" is not an executable`
          }: install it (Debian: apt-get install bubblewrap) or choose tier "process".`,
        );
      }
    }
  }

  /** The hooks `SANDBOX_EXEC` goes to, if any. */
  get hooks(): HookRegistry | undefined {
    return this.#hooks;
  }

  /**
   * Lends an agent's hooks (and logger) to a sandbox that has none; `ctx.agent` of its events
   * is then that agent. Does nothing when the sandbox has hooks of its own. @internal
   */
  lendHooks<A>(hooks: HookRegistry<A>, agent: A, logger: Logger): void {
    if (this.#hooks !== undefined) return;
    this.#hooks = hooks as HookRegistry;
    this.#hookAgent = agent;
    this.#logger ??= logger;
  }

  /**
   * The tier calls run in. `"auto"` is settled on first use: `bubblewrap` when `bwrap` runs
   * here, else `process` (logged at `warn`). A `bubblewrap` sandbox whose `bwrap` cannot make
   * its namespaces rejects with `SandboxUnavailableError`.
   */
  tier(): Promise<SandboxTier> {
    this.#tier ??= this.#settleTier();
    return this.#tier;
  }

  /** Runs code: `javascript` (this Node.js), `bash` or `python` (`python3` on the sandbox PATH). */
  async execute(code: string, options: SandboxExecuteOptions): Promise<SandboxResult> {
    if (typeof code !== "string") throw new ConfigError("code: expected a string");
    const language = SandboxLanguage.safeParse(options?.language);
    if (!language.success) {
      throw new ConfigError(
        `Invalid execute options: language: expected one of ${SandboxLanguage.options.join(", ")}, got ${JSON.stringify(options?.language)}`,
      );
    }
    const command =
      language.data === "javascript"
        ? [process.execPath, "-e", code]
        : language.data === "python"
          ? [this.#program("python3"), "-c", code]
          : [this.#program("bash"), "-c", code];
    return this.#run("code", command, options.signal);
  }

  /** Runs a shell command line with bash in the work folder. */
  async executeCommand(
    command: string,
    options: SandboxCommandOptions = {},
  ): Promise<SandboxResult> {
    if (typeof command !== "string") throw new ConfigError("command: expected a string");
    return this.#run("command", [this.#program("bash"), "-c", command], options.signal);
  }

  async #run(
    kind: Kind,
    command: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<SandboxResult> {
    signal?.throwIfAborted();
    await this.#checkWorkFolder();
    const tier = await this.tier();
    const started = performance.now();
    const outcome = await this.#spawn(tier, command, signal);
    const result = { ...outcome, executionTimeMs: performance.now() - started };
    await this.#emit({
      kind,
      tier,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      executionTimeMs: result.executionTimeMs,
    });
    return result;
  }

  async #spawn(
    tier: SandboxTier,
    command: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<ProcessOutcome> {
    const [file, ...args] =
      tier === "bubblewrap"
        ? [this.#bwrapPath as string, ...this.#bubblewrapArgs(command)]
        : this.#contained
          ? containedCommand(this.#containment as ContainmentTools, isRoot(), command)
          : command;
    try {
      return await runProcess({
        file: file as string,
        args,
        cwd: this.config.cwd,
        env: sandboxEnvironment(this.config.cwd, this.config.env),
        timeoutMs: this.config.timeoutMs,
        maxOutputBytes: this.config.maxOutputBytes,
        signal,
      });
    } catch (error) {
      throw new SandboxError(
        `The sandbox could not start ${file}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  #bubblewrapArgs(command: readonly string[]): string[] {
    return bubblewrapArgs(
      {
        system: readSystemLayout(),
        cwd: this.config.cwd,
        readOnlyExtras: [process.execPath],
        disableUserns: this.#disableUserns,
      },
      command,
    );
  }

  /** An interpreter found on the sandbox's PATH (the same path inside bubblewrap). */
  #program(name: string): string {
    const pathValue = sandboxEnvironment(this.config.cwd, this.config.env).PATH as string;
    const found = findExecutable(name, pathValue);
    if (found === undefined) {
      throw new SandboxError(`${name} was not found on the sandbox PATH (${pathValue}).`);
    }
    return found;
  }

  async #checkWorkFolder(): Promise<void> {
    const folder = await fsPromises.stat(this.config.cwd).catch(() => undefined);
    if (folder?.isDirectory() !== true) {
      throw new SandboxError(`The sandbox work folder "${this.config.cwd}" is not a folder.`);
    }
  }

  async #settleTier(): Promise<SandboxTier> {
    if (this.config.tier !== "process") {
      const problem = await this.#probeBubblewrap();
      if (problem === undefined) return "bubblewrap";
      if (this.config.tier === "bubblewrap") {
        throw new SandboxUnavailableError(`The bubblewrap tier cannot run here: ${problem}`);
      }
      this.#log().warn({ problem }, "bwrap cannot run here; the sandbox uses the process tier");
    }
    const problem = await this.#probeContainment();
    this.#contained = problem === undefined;
    if (problem !== undefined) {
      this.#log().warn(
        { problem },
        "the process tier cannot make a PID namespace here: a setsid daemon may outlive a call, and /proc/$PPID/environ is readable",
      );
    }
    return "process";
  }

  /** Runs a check under the process tier's containment; answers what went wrong, if anything. */
  async #probeContainment(): Promise<string | undefined> {
    if (this.#containment === undefined) return "unshare (util-linux) is not installed";
    const check =
      '[ "$$" = 1 ] && [ "$PPID" = 0 ] || { echo "not in a PID namespace of its own" >&2; exit 1; }';
    const [file, ...args] = containedCommand(this.#containment, isRoot(), [
      this.#program("bash"),
      "-c",
      check,
    ]);
    try {
      const outcome = await runProcess({
        file: file as string,
        args,
        cwd: "/",
        env: sandboxEnvironment(this.config.cwd, {}),
        timeoutMs: this.config.timeoutMs,
        maxOutputBytes: 4_096,
      });
      if (outcome.exitCode === 0) return undefined;
      return `unshare exited with ${outcome.exitCode ?? "a signal"}: ${outcome.stderr.trim()}`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /**
   * Runs a check under the real bubblewrap layout: that it starts, and that the program holds
   * no capability (`CapEff` 0). Answers what went wrong, if anything.
   */
  async #probeBubblewrap(): Promise<string | undefined> {
    if (this.#bwrapPath === undefined || !isExecutable(this.#bwrapPath))
      return "bwrap is not installed";
    try {
      const version = await runProcess({
        file: this.#bwrapPath,
        args: ["--version"],
        cwd: "/",
        env: sandboxEnvironment(this.config.cwd, {}),
        timeoutMs: this.config.timeoutMs,
        maxOutputBytes: 4_096,
      });
      this.#disableUserns = supportsDisableUserns(version.stdout);
      const outcome = await runProcess({
        file: this.#bwrapPath,
        args: this.#bubblewrapArgs([this.#program("bash"), "-c", NO_CAPABILITIES_CHECK]),
        cwd: "/",
        env: sandboxEnvironment(this.config.cwd, {}),
        timeoutMs: this.config.timeoutMs,
        maxOutputBytes: 4_096,
      });
      if (outcome.exitCode === 0) return undefined;
      return `bwrap exited with ${outcome.exitCode ?? "a signal"}: ${outcome.stderr.trim()}`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  async #emit(data: SandboxExecData): Promise<void> {
    const hooks = this.#hooks;
    if (hooks === undefined || !hooks.has(HookEvent.SANDBOX_EXEC)) return;
    await emitHook(
      hooks,
      { event: HookEvent.SANDBOX_EXEC, agent: this.#hookAgent, data, timestamp: Date.now() },
      this.#log(),
    );
  }

  #log(): Logger {
    this.#logger ??= defaultLogger();
    return this.#logger;
  }
}
