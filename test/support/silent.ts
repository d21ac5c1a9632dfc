import { pino } from "pino";

/** A logger that writes nothing: for tests that do not read the log. */
export const silent = pino({ level: "silent" });
