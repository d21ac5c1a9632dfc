import type { Command } from "commander";
import { ExitWith, positiveInteger, printJson, UsageError, withJson } from "./cli-support.js";
import { portNumber } from "./dashboard-commands.js";
import { loadProviderSdk, ProviderFlagError, providerFromFlags } from "./model-option.js";
import { type RedisFlags, redisUrlOf, withRedisOptions } from "./redis-runtime.js";
import { relaunchWithSemiSpace, WORKER_SEMI_SPACE_MB, wantsRelaunch } from "./young-generation.js";

// `demo`, `tour`, `worker` and `replay`: the commands that need no stored runs to read. Each
// loads its module when it runs, so a command starts without loading the others' (the tour
// loads the whole package).

interface ProviderFlags {
  provider?: string;
  model?: string;
  json?: boolean;
}

const withProviderOptions = (command: Command): Command =>
  withJson(command)
    .option(
      "--provider <name>",
      "a real model instead of the scripted one: openai (OPENAI_API_KEY) or anthropic (ANTHROPIC_API_KEY)",
    )
    .option(
      "--model <name>",
      "with --provider: the model (default: gpt-5-mini, claude-sonnet-4-5)",
    );

/** The `--provider` options as `runDemo`/`runRuntimeDemo` take them; bad flags are usage errors. */
function providerOptionOf(flags: ProviderFlags) {
  try {
    const provider = providerFromFlags(flags);
    return provider === undefined ? {} : { provider };
  } catch (error) {
    if (error instanceof ProviderFlagError) throw new UsageError(error.message);
    throw error;
  }
}

interface DemoFlags extends ProviderFlags {
  dashboard?: boolean;
  port: number;
  host: string;
  tokenFile?: string;
}

/** `demo`, the default command: the embedded runtime, many concurrent runs, one approved. */
export function registerDemo(program: Command): Command {
  return withProviderOptions(program.command("demo", { isDefault: true }))
    .description(
      "many concurrent durable runs on the embedded runtime, one approved by a person (no servers)",
    )
    .option(
      "--dashboard",
      "leave a few runs waiting for a person and serve the dashboard over them",
    )
    .option("--port <n>", "with --dashboard: the port (0: any free port)", portNumber, 4400)
    .option("--host <host>", "with --dashboard: the interface to listen on", "127.0.0.1")
    .option("--token-file <file>", "with --dashboard: bearer tokens by name")
    .action(async (flags: DemoFlags) => {
      const options = providerOptionOf(flags);
      await loadProviderSdk(flags);
      if (flags.dashboard === true) {
        const { runDashboardDemo } = await import("./dashboard-demo.js");
        const { provider: _name, model: _model, ...dashboardFlags } = flags;
        await runDashboardDemo({ ...dashboardFlags, ...options });
        return;
      }
      const { runRuntimeDemo } = await import("./runtime-demo.js");
      if (flags.json !== true) {
        await runRuntimeDemo(options);
        return;
      }
      const lines: string[] = [];
      const summary = await runRuntimeDemo({ ...options, output: (line) => lines.push(line) });
      printJson({ ...summary, lines });
    });
}

/** `tour`: direct runs with a scripted model, printed as they happen. */
export function registerTour(program: Command): Command {
  return withProviderOptions(program.command("tour"))
    .description(
      "direct runs with a scripted model: tools, middleware, hooks, streaming, an approval",
    )
    .action(async (flags: ProviderFlags) => {
      const options = providerOptionOf(flags);
      await loadProviderSdk(flags);
      const { runDemo } = await import("./demo.js");
      if (flags.json !== true) {
        await runDemo(options);
        return;
      }
      const lines: string[] = [];
      await runDemo({ ...options, output: (line) => lines.push(line), deltaDelayMs: 0 });
      printJson({ lines });
    });
}

interface WorkerFlags extends RedisFlags {
  agents: string;
  concurrency?: number;
  approvalWebhook?: string;
  json?: boolean;
}

/** Where the worker's approval webhook finds its signing secret (never a flag: `ps` shows those). */
export const WEBHOOK_SECRET_VARIABLE = "HARNESSX_APPROVAL_WEBHOOK_SECRET";

/** `--approval-webhook URL` with its secret from the environment; a usage error without it. */
function approvalWebhookOf(url: string | undefined): { url: string; secret: string } | undefined {
  if (url === undefined) return undefined;
  const secret = process.env[WEBHOOK_SECRET_VARIABLE] ?? "";
  if (secret.length < 16) {
    throw new UsageError(
      `--approval-webhook needs its signing secret in ${WEBHOOK_SECRET_VARIABLE} (at least 16 characters)`,
    );
  }
  if (!/^https?:\/\//i.test(url)) {
    throw new UsageError(`--approval-webhook takes an http: or https: URL, not "${url}"`);
  }
  return { url, secret };
}

/** `worker`: advances durable runs from Redis until SIGINT/SIGTERM. */
export function registerWorker(program: Command): Command {
  return withJson(withRedisOptions(program.command("worker")))
    .description(
      `advance durable runs from Redis until SIGINT/SIGTERM (logs on stderr), in a child process with a ${WORKER_SEMI_SPACE_MB} MB young generation unless NODE_OPTIONS sets one`,
    )
    .requiredOption(
      "--agents <module>",
      "a module exporting `agents` (or a default): Agent[] or a function returning them",
    )
    .option(
      "--concurrency <n>",
      "jobs of each queue at once (default: 256 steps, 32 tool jobs)",
      positiveInteger,
    )
    .option(
      "--approval-webhook <url>",
      `POST each call that starts waiting for a person to this http(s) URL, signed (x-harnessx-signature) with the secret in $${WEBHOOK_SECRET_VARIABLE}`,
    )
    .action(async (flags: WorkerFlags) => {
      const redis = redisUrlOf(flags, "worker");
      const approvalWebhook = approvalWebhookOf(flags.approvalWebhook);
      if (wantsRelaunch()) throw new ExitWith(await relaunchWithSemiSpace());
      const { runWorker } = await import("./worker.js");
      const report = await runWorker({
        agents: flags.agents,
        redis,
        ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
        ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
        ...(approvalWebhook === undefined ? {} : { approvalWebhook }),
      });
      if (flags.json === true) printJson(report);
    });
}

/** `replay FILE.jsonl [--agent module]`: a flight recording's timeline, or a replay of it. */
export function registerReplay(program: Command): Command {
  return withJson(program.command("replay"))
    .description(
      "a flight recording's timeline, or with --agent that agent run against the recorded model responses, compared",
    )
    .argument("<FILE.jsonl>", "a recording, as recorder.exportJsonl(runId) wrote it")
    .option("--agent <module>", "a module exporting createAgent(provider) (or a default)")
    .action(async (file: string, flags: { agent?: string; json?: boolean }) => {
      const { runReplay } = await import("./replay.js");
      const code = await runReplay({
        file,
        json: flags.json === true,
        ...(flags.agent === undefined ? {} : { agent: flags.agent }),
      });
      if (code !== 0) throw new ExitWith(code);
    });
}
