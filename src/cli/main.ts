#!/usr/bin/env node
// The `harnessx` command. Kept small: argument parsing here, each command in its own module.
import { parseArgs } from "node:util";
import { runDemo } from "./demo.js";

const USAGE = `Usage: harnessx [command] [options]

Commands:
  demo        direct runs with a scripted model: tools, middleware, hooks,
              streaming and an approval (the default)

Options:
  -h, --help  show this help`;

async function main(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    console.error(`harnessx: ${error instanceof Error ? error.message : String(error)}\n`);
    console.error(USAGE);
    return 2;
  }
  if (parsed.values.help === true || parsed.positionals[0] === "help") {
    console.log(USAGE);
    return 0;
  }
  const [command = "demo", ...extra] = parsed.positionals;
  if (command !== "demo" || extra.length > 0) {
    const unknown =
      command !== "demo" ? `unknown command "${command}"` : `unexpected "${extra[0]}"`;
    console.error(`harnessx: ${unknown}. Run \`harnessx --help\` for the commands.`);
    return 2;
  }
  try {
    await runDemo();
    return 0;
  } catch (error) {
    console.error("harnessx: the demo failed:", error);
    return 1;
  }
}

const parse = (args: string[]) =>
  parseArgs({
    args,
    options: { help: { type: "boolean", short: "h" } },
    allowPositionals: true,
    strict: true,
  });

// A reader that stops early (`harnessx demo | head`) is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(0);
});

process.exitCode = await main(process.argv.slice(2));
