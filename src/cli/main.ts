#!/usr/bin/env node
// The `harnessx` command: the program is built in program.ts, each command in its own module.
import { runCli } from "./program.js";

// A reader that stops early (`harnessx demo | head`) is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(0);
});

process.exitCode = await runCli(process.argv.slice(2));
