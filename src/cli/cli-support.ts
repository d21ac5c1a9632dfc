import { type Command, InvalidArgumentError, Option } from "commander";
import { type Logger, pino } from "pino";

// What every command shares: its errors (each with its exit code), option parsers and output.

/** The command line asks for something impossible: exit code 2, no stack. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** An expected failure with a stable `code` (a run already finished…): exit code 1, no stack. */
export class CommandFailed extends Error {
  override name = "CommandFailed";
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Ends the command with `exitCode` after it has printed its own report (a replay diverged). */
export class ExitWith extends Error {
  override name = "ExitWith";
  readonly exitCode: number;
  constructor(exitCode: number) {
    super(`exit ${exitCode}`);
    this.exitCode = exitCode;
  }
}

/** Commander's parser for a whole number of at least 1. */
export function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw new InvalidArgumentError("must be a positive whole number.");
  }
  return parsed;
}

/** Adds `--json` to a command: one JSON document on stdout instead of text. */
export const withJson = (command: Command): Command =>
  command.addOption(new Option("--json", "print one JSON document on stdout, for scripts"));

/** Writes one JSON document (a line) on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Progress of long work: on stderr, so stdout stays the command's answer. */
export function progress(message: string): void {
  process.stderr.write(`harnessx: ${message}\n`);
}

/** The CLI's log: on stderr (stdout is the command's answer), `level` and worse by default. */
export const stderrLogger = (name: string, level: string): Logger =>
  pino(
    { name, level: process.env.HARNESSX_LOG_LEVEL ?? level },
    pino.destination({ dest: 2, sync: true }),
  );
