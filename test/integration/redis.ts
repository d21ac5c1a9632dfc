// Real Redis for the integration tests: REDIS_URL (test/global-setup.ts sets it to a server of
// its own when the environment gives none). Tests that need it fail with a clear message when it
// cannot be reached; they never skip.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { freePort } from "../support/free-port.js";
import { launchRedisServer, stopProcess } from "../support/redis-server.js";

export const redisUrl = (): string => {
  const url = process.env.REDIS_URL;
  if (!url) {
    throw new Error(
      "The Redis integration tests need a Redis server: set REDIS_URL, or put redis-server on " +
        "PATH (Debian: apt-get install redis-server), or run a Docker engine for testcontainers.",
    );
  }
  return url;
};

/** Throws, naming the URL and how to fix it, unless Redis answers PING. */
export async function requireRedis(url = redisUrl()): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `The Redis integration tests need a Redis server at ${url} (${reason}). ` +
        "Start one (redis-server --maxmemory-policy noeviction) or set REDIS_URL.",
    );
  } finally {
    client.disconnect();
  }
}

/** A key prefix no other test uses (BullMQ prefixes must not contain ":"). */
export const uniquePrefix = (): string => `hxtest-${randomUUID()}`;

/** Every key under `prefix`. */
export async function keysUnder(prefix: string, url = redisUrl()): Promise<string[]> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const found: string[] = [];
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
  return found;
}

/** Deletes every key under `prefix`. */
export async function deletePrefix(prefix: string, url = redisUrl()): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await client.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/** A throwaway `redis-server` (from PATH) on a free port, with extra command-line options. */
export async function startRedisServer(options: readonly string[]): Promise<RedisServer> {
  const port = await freePort();
  const child = await launchRedisServer(port, ["--save", "", "--appendonly", "no", ...options]);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => stopProcess(child, "SIGKILL"),
  };
}
