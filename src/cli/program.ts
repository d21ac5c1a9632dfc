import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { HarnessError } from "../core/errors.js";
import { CommandFailed, ExitWith, printJson, UsageError } from "./cli-support.js";
import { registerDashboard, registerDoctor } from "./dashboard-commands.js";
import { registerDecisions } from "./decision-commands.js";
import { registerDemo, registerReplay, registerTour, registerWorker } from "./local-commands.js";
import { registerRuns } from "./runs-commands.js";
import { registerSessions } from "./session-commands.js";

/** Adds one command (or a group) to the program. */
export type RegisterCommand = (program: Command) => unknown;

/**
 * The commands, in the order `--help` lists them. A new command is one more entry: a function
 * that adds it to the program (see runs-commands.ts; redis-runtime.ts gives `--redis`/`--prefix`
 * and a runtime with no agents, cli-support.ts `--json`, the errors and their exit codes).
 */
const COMMANDS: readonly RegisterCommand[] = [
  registerDemo,
  registerTour,
  registerWorker,
  registerRuns,
  registerDecisions,
  registerSessions,
  registerDashboard,
  registerDoctor,
  registerReplay,
];

const HINT = "Run `harnessx --help` (or `harnessx COMMAND --help`) for the commands.";

const version = (): string => {
  const file = new URL("../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
};

/**
 * The `harnessx` program. It never exits the process: a usage error throws `CommanderError`,
 * which `runCli` turns into exit code 2.
 */
export function createProgram(commands: readonly RegisterCommand[] = COMMANDS): Command {
  const program = new Command("harnessx")
    .usage("[command] [options]")
    .description("An agent harness and multi-run orchestrator.")
    .version(version(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show the help of harnessx or of a command")
    // Subcommands made after these calls inherit them.
    .exitOverride()
    .configureOutput({
      outputError: (message, write) => write(`harnessx: ${message.replace(/^error: /, "")}`),
    })
    .showHelpAfterError(HINT)
    .addHelpText(
      "after",
      "\nEvery command takes --json (one JSON document on stdout). Exit codes: 0 ok, 1 failed, 2 usage.\n" +
        "The Redis commands (worker, runs, approve, deny, respond, sessions, dashboard, doctor) take --redis URL (default: $REDIS_URL) and --prefix.",
    );
  for (const register of commands) register(program);
  return program;
}

/** The text of an error a person expects (no stack), or undefined for a bug. */
function expectedFailure(error: unknown): { code: string; message: string } | undefined {
  if (error instanceof CommandFailed || HarnessError.isHarnessError(error)) {
    return { code: error.code, message: error.message };
  }
  // A file that is not there, a permission refused: Node's own system errors.
  const system = error as NodeJS.ErrnoException;
  if (error instanceof Error && typeof system.code === "string" && system.syscall !== undefined) {
    return { code: system.code, message: error.message };
  }
  return undefined;
}

/**
 * `harnessx frob` names no command. Commander would hand "frob" to the default command as an
 * operand ("too many arguments for 'demo'"); say what is wrong instead.
 */
function rejectUnknownCommand(program: Command, first: string | undefined): void {
  if (first === undefined || first.startsWith("-") || first === "help") return;
  const known = program.commands.some(
    (command) => command.name() === first || command.aliases().includes(first),
  );
  if (!known) throw new UsageError(`unknown command "${first}"`);
}

/** Parses `args` (without node and the script), runs the command, and returns its exit code. */
export async function runCli(args: readonly string[], program = createProgram()): Promise<number> {
  let active: Command | undefined;
  program.hook("preAction", (_program, command) => {
    active = command;
  });
  try {
    rejectUnknownCommand(program, args[0]);
    await program.parseAsync(args, { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof ExitWith) return error.exitCode;
    if (error instanceof UsageError) {
      console.error(`harnessx: ${error.message}\n${HINT}`);
      return 2;
    }
    const name = active?.name() ?? "harnessx";
    const failure = expectedFailure(error);
    if (failure === undefined) {
      console.error(`harnessx ${name} failed:`, error);
      return 1;
    }
    console.error(`harnessx: ${failure.code}: ${failure.message}`);
    if (active?.opts<{ json?: boolean }>().json === true) printJson({ error: failure });
    return 1;
  }
}
