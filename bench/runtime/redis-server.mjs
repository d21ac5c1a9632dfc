// A Redis for a benchmark: REDIS_URL when set, else a private redis-server on a free port (no
// persistence, noeviction), stopped by `stop()`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";

export async function redisServer() {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {} };
  const { url, stop } = await launchRedisServer(await freePort(), (args) => [
    "redis-server",
    [...args, "--maxmemory-policy", "noeviction"],
  ]);
  return { url, stop };
}

/**
 * A redis-server on `port` (no persistence), started as `command(args)` gives it (say, under
 * valgrind), once it answers PING (`waitMs` at most).
 */
export async function launchRedisServer(port, command, waitMs = 5_000) {
  const [file, args] = command(["--port", String(port), "--save", "", "--appendonly", "no"]);
  const child = spawn(file, args, { stdio: "ignore" });
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on("error", () => {});
  for (const started = Date.now(); ; ) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (error) {
      if (Date.now() - started > waitMs)
        throw new Error(`${file} on port ${port} did not answer`, { cause: error });
      await sleep(50);
    }
  }
  probe.disconnect();
  return {
    url,
    child,
    stop: async () => {
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

export async function redisVersion(client) {
  const info = await client.info("server");
  return /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown";
}

export async function freePort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}
