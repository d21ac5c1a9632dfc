#!/usr/bin/env node
// The `harnessx` command. Kept small: argument parsing here, each command in its own module.
import { parseArgs } from "node:util";
import { runDemo } from "./demo.js";
import { ProviderFlagError, providerFromFlags } from "./model-option.js";
import { runReplay } from "./replay.js";
import { runRuntimeDemo } from "./runtime-demo.js";
import { runWorker } from "./worker.js";

const USAGE = `Usage: harnessx [command] [options]

Commands:
  demo        many concurrent durable runs on the embedded runtime, one approved by a
              person (the default; no servers needed)
  tour        direct runs with a scripted model: tools, middleware, hooks, streaming
              and an approval
  worker      advance durable runs from Redis until SIGINT/SIGTERM
                --agents <module>   exports \`agents\` (or default): Agent[] or a function
                --redis <url>       e.g. redis://127.0.0.1:6379 (default: $REDIS_URL)
                --prefix <name>     key prefix (default: hx)
                --concurrency <n>   jobs of each queue at once (default: 16)
  replay FILE.jsonl
              a flight recording: its timeline, or with --agent <module> (exporting
              createAgent(provider) or a default) that agent run against the recorded
              model responses, compared with the recording; --json for one JSON object

Options:
  --provider <name>  demo and tour: a real model, openai (OPENAI_API_KEY) or
                     anthropic (ANTHROPIC_API_KEY), instead of the scripted one
  --model <name>     with --provider: the model (default: gpt-5-mini, claude-sonnet-4-5)
  -h, --help         show this help`;

const parse = (args: string[]) =>
  parseArgs({
    args,
    options: {
      help: { type: "boolean", short: "h" },
      agents: { type: "string" },
      redis: { type: "string" },
      prefix: { type: "string" },
      concurrency: { type: "string" },
      provider: { type: "string" },
      model: { type: "string" },
      agent: { type: "string" },
      json: { type: "boolean" },
    },
    allowPositionals: true,
    strict: true,
  });

class UsageError extends Error {}

function positiveInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw new UsageError(`--${name} must be a positive whole number, got "${value}"`);
  }
  return parsed;
}

async function main(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    console.error(`harnessx: ${error instanceof Error ? error.message : String(error)}\n`);
    console.error(USAGE);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true || positionals[0] === "help") {
    console.log(USAGE);
    return 0;
  }
  const [command = "demo", ...extra] = positionals;
  try {
    const operands = command === "replay" ? 1 : 0;
    if (extra.length > operands) throw new UsageError(`unexpected "${extra[operands]}"`);
    switch (command) {
      case "demo":
      case "tour": {
        const provider = providerFromFlags(values);
        const options = provider === undefined ? {} : { provider };
        await (command === "demo" ? runRuntimeDemo(options) : runDemo(options));
        return 0;
      }
      case "worker": {
        const redis = values.redis ?? process.env.REDIS_URL;
        if (values.agents === undefined) throw new UsageError("worker needs --agents <module>");
        if (redis === undefined) throw new UsageError("worker needs --redis <url> (or REDIS_URL)");
        const concurrency = positiveInteger(values.concurrency, "concurrency");
        await runWorker({
          agents: values.agents,
          redis,
          ...(values.prefix === undefined ? {} : { prefix: values.prefix }),
          ...(concurrency === undefined ? {} : { concurrency }),
        });
        return 0;
      }
      case "replay": {
        const [file] = extra;
        if (file === undefined) throw new UsageError("replay needs a FILE.jsonl");
        return await runReplay({
          file,
          json: values.json === true,
          ...(values.agent === undefined ? {} : { agent: values.agent }),
        });
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof ProviderFlagError) {
      console.error(`harnessx: ${error.message}. Run \`harnessx --help\` for the commands.`);
      return 2;
    }
    console.error(`harnessx ${command} failed:`, error);
    return 1;
  }
}

// A reader that stops early (`harnessx demo | head`) is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(0);
});

process.exitCode = await main(process.argv.slice(2));
