import { type Logger, pino } from "pino";

/** A pino logger whose lines a test reads back, and waits on as they are written. */
export function captureLogs(level: pino.Level = "debug") {
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  const logger: Logger = pino(
    { level },
    {
      write(line: string) {
        lines.push(line);
        for (const wake of waiters.splice(0)) wake();
      },
    },
  );
  return {
    logger,
    lines,
    /** The first line (parsed) that `matches`, once one is written. */
    async waitFor(matches: (entry: Record<string, unknown>) => boolean) {
      for (;;) {
        for (const line of lines) {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (matches(entry)) return entry;
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}
