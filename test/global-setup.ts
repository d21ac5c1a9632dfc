// Provides the Redis the integration tests use, as DESIGN.md orders it: REDIS_URL when set;
// otherwise a redis-server from PATH on a free port; otherwise testcontainers where a Docker
// engine answers. With none of them, REDIS_URL stays unset and every Redis test fails with a
// message saying so (test/integration/redis.ts); nothing is skipped.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./support/free-port.js";

type Stop = () => Promise<void>;

async function startLocalRedis(): Promise<{ url: string; stop: Stop } | undefined> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "harnessx-redis-"));
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"].concat([
      "--maxmemory-policy",
      "noeviction",
      "--dir",
      dir,
    ]),
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const ready = await new Promise<boolean>((resolve) => {
    let output = "";
    child.once("error", () => resolve(false));
    child.once("exit", () => resolve(false));
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) resolve(true);
    });
  });
  const stop: Stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  if (!ready) {
    await stop();
    return undefined;
  }
  return { url: `redis://127.0.0.1:${port}`, stop };
}

async function startContainerRedis(): Promise<{ url: string; stop: Stop } | undefined> {
  try {
    const { GenericContainer } = await import("testcontainers");
    const container = await new GenericContainer("redis:7-alpine")
      .withCommand(["redis-server", "--maxmemory-policy", "noeviction"])
      .withExposedPorts(6379)
      .start();
    return {
      url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch {
    return undefined; // no Docker engine answers
  }
}

let stopRedis: Stop | undefined;

export async function setup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  const redis = (await startLocalRedis()) ?? (await startContainerRedis());
  if (redis === undefined) return;
  process.env.REDIS_URL = redis.url;
  stopRedis = redis.stop;
}

export async function teardown(): Promise<void> {
  await stopRedis?.();
}
