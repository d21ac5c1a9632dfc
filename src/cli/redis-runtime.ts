import type { Command } from "commander";
import type { Agent } from "../engine/agent.js";
import { AgentRuntime } from "../runtime/agent-runtime.js";
import { redisBackend } from "../runtime/redis-backend.js";
import { stderrLogger, UsageError } from "./cli-support.js";

/** The options of a command that works on a Redis runtime. */
export interface RedisFlags {
  redis?: string | undefined;
  prefix?: string | undefined;
}

/** Adds `--redis URL` and `--prefix NAME` to a command. */
export const withRedisOptions = (command: Command): Command =>
  command
    .option(
      "--redis <url>",
      "the runtime's Redis, e.g. redis://127.0.0.1:6379 (default: $REDIS_URL)",
    )
    .option("--prefix <name>", "the runtime's key prefix (default: hx)");

/** `--redis`, else `$REDIS_URL`; a usage error naming the command without either. */
export function redisUrlOf(flags: RedisFlags, command: string, env = process.env): string {
  const url = flags.redis ?? env.REDIS_URL;
  if (url === undefined || url === "") {
    throw new UsageError(`${command} needs --redis <url> (or REDIS_URL)`);
  }
  return url;
}

/**
 * A started runtime on the Redis backend the flags name, with no workers (and the given agents,
 * none by default: an edit is checked with its run's agent): it reads
 * runs and records decisions; the workers elsewhere advance them. The caller closes it.
 */
export async function openRedisRuntime(
  flags: RedisFlags,
  command: string,
  agents: readonly Agent[] = [],
): Promise<AgentRuntime> {
  const runtime = new AgentRuntime({
    agents: [...agents],
    backend: redisBackend({
      url: redisUrlOf(flags, command),
      ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
      connectTimeoutMs: 5_000,
    }),
    logger: stderrLogger("harnessx-cli", "error"),
  });
  try {
    await runtime.start({ workers: false });
  } catch (error) {
    await runtime.close({ timeoutMs: 2_000 });
    throw error;
  }
  return runtime;
}

/** Runs `use` on `openRedisRuntime(flags, command)`, then closes the runtime. */
export async function withRedisRuntime<T>(
  flags: RedisFlags,
  command: string,
  use: (runtime: AgentRuntime) => Promise<T>,
  agents: readonly Agent[] = [],
): Promise<T> {
  const runtime = await openRedisRuntime(flags, command, agents);
  try {
    return await use(runtime);
  } finally {
    await runtime.close({ timeoutMs: 2_000 });
  }
}
