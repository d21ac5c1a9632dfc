// A local Redis Cluster of three masters (redis-server and redis-cli from PATH), for the test
// set-up: each node on a free port, its cluster bus on another free port (`cluster-port`).
import type { ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";
import { launchRedisServer, stopProcess } from "./redis-server.js";

const run = promisify(execFile);

export interface LocalCluster {
  /** "127.0.0.1:<port>,…": what REDIS_CLUSTER_NODES holds. */
  nodes: string;
  stop(): Promise<void>;
}

/** Starts `masters` cluster-enabled servers, joins them into one cluster, waits until it is ok. */
export async function startRedisCluster(masters = 3): Promise<LocalCluster> {
  const dir = await mkdtemp(join(tmpdir(), "harnessx-redis-cluster-"));
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((child) => stopProcess(child, "SIGTERM")));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let index = 0; index < masters; index += 1) {
      const port = await freePort();
      let busPort = await freePort();
      while (busPort === port) busPort = await freePort();
      children.push(
        await launchRedisServer(port, [
          "--cluster-enabled",
          "yes",
          "--cluster-port",
          String(busPort),
          "--cluster-config-file",
          join(dir, `nodes-${port}.conf`),
          "--save",
          "",
          "--appendonly",
          "no",
          "--maxmemory-policy",
          "noeviction",
          "--dir",
          dir,
        ]),
      );
      ports.push(port);
    }
    const addresses = ports.map((port) => `127.0.0.1:${port}`);
    await run("redis-cli", [
      "--cluster",
      "create",
      ...addresses,
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    await Promise.all(ports.map((port) => clusterStateOk(port)));
    return { nodes: addresses.join(","), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Resolves once the node on `port` reports `cluster_state:ok`; rejects after 10 s. */
async function clusterStateOk(port: number): Promise<void> {
  const client = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 1 });
  try {
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const info = await client.cluster("INFO");
      if (info.includes("cluster_state:ok")) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`The Redis Cluster node on port ${port} never reported cluster_state:ok.`);
  } finally {
    client.disconnect();
  }
}
