// A Redis for a benchmark: REDIS_URL when set, else a private redis-server on a free port (no
// persistence, noeviction), stopped by `stop()`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";

export async function redisServer() {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {} };
  const port = await freePort();
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      "noeviction",
    ],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on("error", () => {});
  for (let attempt = 0; ; attempt += 1) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (error) {
      if (attempt > 100)
        throw new Error(`redis-server on port ${port} did not answer`, { cause: error });
      await sleep(50);
    }
  }
  probe.disconnect();
  return {
    url,
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

async function freePort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}
