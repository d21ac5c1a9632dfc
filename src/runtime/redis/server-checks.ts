import { z } from "zod";
import { BackendError } from "../../store/errors.js";
import { Cluster } from "../load-ioredis.js";
import { mastersOf } from "../redis-connection.js";
import { isUnanswered } from "../redis-failures.js";
import type { RedisContext } from "./context.js";

/** Connects the backend's connections and waits until each answers, or `timeoutMs` passes. */
export async function connectWithin(context: RedisContext, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const noAnswer = new Error(`no answer within ${timeoutMs} ms`);
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(noAnswer), timeoutMs);
  });
  const connections = [...new Set([context.redis, context.queueRedis])];
  try {
    await Promise.race([
      Promise.all(
        connections.map(async (redis) => {
          if (redis.status === "wait") await redis.connect();
          await redis.ping();
        }),
      ),
      timeout,
    ]);
  } catch (error) {
    if (context.ownsConnection) for (const redis of connections) redis.disconnect();
    const reason = error instanceof Error ? error.message : String(error);
    // A server that takes the connection but answers nothing (frozen, paused) is as
    // unavailable as one that refuses it; a refusal it did answer (a wrong password) is not.
    const unavailable = error === noAnswer || isUnanswered(error);
    throw new BackendError(`Cannot reach ${context.where}: ${reason}`, {
      cause: error,
      ...(unavailable ? { code: "backend_unavailable" } : {}),
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Every server that holds data (each master of a cluster) must keep it: 'noeviction'. */
export async function checkEvictionPolicy(context: RedisContext): Promise<void> {
  const onCluster = context.redis instanceof Cluster;
  for (const server of mastersOf(context.redis)) {
    let policy: string | undefined;
    try {
      const reply = z.array(z.string()).parse(await server.config("GET", "maxmemory-policy"));
      policy = reply[1];
    } catch (error) {
      throw new BackendError(
        "Cannot read Redis's maxmemory-policy (CONFIG GET); harnessx needs 'noeviction' and must be able to check it.",
        { cause: error, ...(isUnanswered(error) ? { code: "backend_unavailable" } : {}) },
      );
    }
    if (policy !== "noeviction") {
      const where = onCluster
        ? `Redis Cluster node ${server.options.host ?? "?"}:${server.options.port ?? "?"}`
        : context.where;
      throw new BackendError(
        `${where} has maxmemory-policy '${policy ?? "unknown"}': it may evict run records and queue keys. Set 'maxmemory-policy noeviction'.`,
      );
    }
  }
}
