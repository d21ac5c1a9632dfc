import { type Logger, pino } from "pino";
import { REDACTED, SECRET_KEYS } from "./secret-keys.js";

/**
 * harnessx's own log when the application passes none: JSON lines on stderr, since stdout is the
 * program's (a CLI's `--json` answer, say); `warn` and worse unless `HARNESSX_LOG_LEVEL` says
 * otherwise; fields named like a secret redacted.
 */
export function defaultLogger(name = "harnessx"): Logger {
  return pino(
    {
      name,
      level: process.env.HARNESSX_LOG_LEVEL ?? "warn",
      redact: { paths: SECRET_KEYS.map((key) => `*.${key}`), censor: REDACTED },
    },
    pino.destination({ dest: 2, sync: true }),
  );
}
