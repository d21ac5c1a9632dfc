// Provides the Redis the integration tests use, as DESIGN.md orders it: REDIS_URL when set;
// otherwise a redis-server from PATH on a free port; otherwise testcontainers where a Docker
// engine answers. With none of them, REDIS_URL stays unset and every Redis test fails with a
// message saying so (test/integration/redis.ts); nothing is skipped.
// The Redis Cluster tests get REDIS_CLUSTER_NODES ("host:port,…"): when unset (whatever
// REDIS_URL is), a three-master cluster of redis-servers from PATH started here.
// The fixture programs the tests start as processes are bundled here (support/fixture-bundles.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleFixtures } from "./support/fixture-bundles.js";
import { freePort } from "./support/free-port.js";
import { startRedisCluster } from "./support/redis-cluster.js";
import { launchRedisServer, stopProcess } from "./support/redis-server.js";

type Stop = () => Promise<void>;

async function startLocalRedis(): Promise<{ url: string; stop: Stop } | undefined> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "harnessx-redis-"));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  try {
    const child = await launchRedisServer(port, [
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      "noeviction",
      "--dir",
      dir,
    ]);
    const stop: Stop = async () => {
      await stopProcess(child, "SIGTERM");
      await removeDir();
    };
    return { url: `redis://127.0.0.1:${port}`, stop };
  } catch {
    await removeDir(); // no redis-server on PATH, or it would not start
    return undefined;
  }
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
let stopCluster: Stop | undefined;
let removeBundles: Stop | undefined;

export async function setup(): Promise<void> {
  await Promise.all([provideRedis(), provideCluster(), provideBundles()]);
}

async function provideBundles(): Promise<void> {
  removeBundles = (await bundleFixtures()).remove;
}

async function provideRedis(): Promise<void> {
  if (process.env.REDIS_URL) return;
  const redis = (await startLocalRedis()) ?? (await startContainerRedis());
  if (redis === undefined) return;
  process.env.REDIS_URL = redis.url;
  stopRedis = redis.stop;
}

async function provideCluster(): Promise<void> {
  if (process.env.REDIS_CLUSTER_NODES) return;
  try {
    const cluster = await startRedisCluster();
    process.env.REDIS_CLUSTER_NODES = cluster.nodes;
    stopCluster = cluster.stop;
  } catch (error) {
    // Told by the cluster tests when they fail for want of a cluster.
    process.env.REDIS_CLUSTER_SETUP_ERROR = error instanceof Error ? error.message : String(error);
  }
}

export async function teardown(): Promise<void> {
  await Promise.all([stopRedis?.(), stopCluster?.(), removeBundles?.()]);
}
