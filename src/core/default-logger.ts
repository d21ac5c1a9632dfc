import type { Logger } from "pino";
import { createRequire } from "./node-builtins.js";
import { REDACTED, SECRET_KEYS } from "./secret-keys.js";

// pino loads when the first logger is made, not at `import "harnessx"` (SPEC §15): a program
// that passes its own logger never loads it.
const requirePino = (): typeof import("pino") =>
  createRequire(import.meta.url)("pino") as typeof import("pino");

/**
 * harnessx's own log when the application passes none: JSON lines on stderr, since stdout is the
 * program's (a CLI's `--json` answer, say); `warn` and worse unless `HARNESSX_LOG_LEVEL` says
 * otherwise; fields named like a secret redacted.
 */
export function defaultLogger(name = "harnessx"): Logger {
  const { pino } = requirePino();
  return pino(
    {
      name,
      level: process.env.HARNESSX_LOG_LEVEL ?? "warn",
      redact: { paths: SECRET_KEYS.map((key) => `*.${key}`), censor: REDACTED },
    },
    pino.destination({ dest: 2, sync: true }),
  );
}

/** A logger that writes nothing, until the application's own replaces it. */
export function silentLogger(): Logger {
  return requirePino().pino({ level: "silent" });
}
