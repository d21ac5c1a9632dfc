import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../core/errors.js";
import { Agent } from "../engine/agent.js";
import { AgentRuntime } from "../runtime/agent-runtime.js";
import { redisBackend } from "../runtime/redis-backend.js";
import { stderrLogger } from "./cli-support.js";
import { semiSpaceFlag, whenParentDies } from "./young-generation.js";

export interface WorkerOptions {
  /** A module whose `default` or `agents` export is Agent[] (or a function returning them). */
  agents: string;
  redis: string;
  prefix?: string;
  concurrency?: number;
  lockDurationMs?: number;
  /**
   * How long a shutdown waits for jobs in flight.
   * @defaultValue `HARNESSX_SHUTDOWN_MS`, or 10000
   */
  shutdownMs?: number;
  /** Where each call that starts waiting for a person is POSTed, signed with `secret`. */
  approvalWebhook?: { url: string; secret: string };
}

/** Loads the agents a worker serves from a user module. */
export async function loadAgents(path: string): Promise<Agent[]> {
  const file = resolve(path);
  if (!existsSync(file)) throw new ConfigError(`The agents module ${path} does not exist.`);
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  let exported = module.agents ?? module.default;
  if (typeof exported === "function") exported = await (exported as () => unknown)();
  const agents = Array.isArray(exported) ? exported : [exported];
  if (agents.length === 0 || !agents.every((each) => each instanceof Agent)) {
    throw new ConfigError(
      `${path} must export \`agents\` (or a default export): an array of Agent, or a function returning one.`,
    );
  }
  return agents as Agent[];
}

/** What a worker did, for `--json`. */
export interface WorkerReport {
  agents: string[];
  /** The signal that stopped it. */
  signal: NodeJS.Signals;
}

/** A Redis URL without its password, for logs. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable url)";
  }
}

/**
 * `harnessx worker`: advances runs of the given agents from Redis until SIGINT or SIGTERM, then
 * stops taking jobs and waits for those in flight. It logs (pino, JSON lines) on stderr.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerReport> {
  // Relaunched with the worker's young generation (young-generation.ts): a parent gone, even
  // while this one starts, is a SIGTERM.
  const orphaned = whenParentDies().then((): NodeJS.Signals => "SIGTERM");
  const shutdownMs = options.shutdownMs ?? shutdownFromEnvironment();
  const logger = stderrLogger("harnessx-worker", "info");
  const agents = await loadAgents(options.agents);
  const runtime = new AgentRuntime({
    agents,
    logger,
    backend: redisBackend({
      url: options.redis,
      ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
      ...(options.lockDurationMs === undefined ? {} : { lockDurationMs: options.lockDurationMs }),
    }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.approvalWebhook === undefined ? {} : { approvalWebhook: options.approvalWebhook }),
  });
  const names = agents.map((agent) => agent.name);
  const redis = withoutPassword(options.redis);
  logger.info({ agents: names, redis }, "worker starting");
  await runtime.start();
  logger.info({ agents: names, redis, semiSpaceMb: semiSpaceFlag() ?? null }, "worker started");

  const signal = await Promise.race([
    orphaned,
    new Promise<NodeJS.Signals>((resolveSignal) => {
      process.once("SIGINT", resolveSignal);
      process.once("SIGTERM", resolveSignal);
    }),
  ]);
  logger.info({ signal, shutdownMs }, "worker stopping");
  // A second signal while jobs finish: stop at once (their runs are recovered elsewhere).
  const again = (second: NodeJS.Signals) => {
    logger.warn({ signal: second }, "worker stopped at once");
    process.exit(1);
  };
  process.once("SIGINT", again);
  process.once("SIGTERM", again);
  // Returns by the deadline: jobs still running then are left for another worker.
  await runtime.close({ timeoutMs: shutdownMs });
  process.off("SIGINT", again);
  process.off("SIGTERM", again);
  logger.info("worker stopped");
  // A handler that ignored its signal may still hold a timer or socket open: the process
  // exits anyway. Unreferenced, so a process with nothing left to do exits on its own first.
  setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
  return { agents: names, signal };
}

function shutdownFromEnvironment(): number {
  const value = process.env.HARNESSX_SHUTDOWN_MS;
  if (value === undefined || value === "") return 10_000;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) {
    throw new ConfigError(`HARNESSX_SHUTDOWN_MS must be a positive integer (ms), not "${value}".`);
  }
  return parsed;
}
