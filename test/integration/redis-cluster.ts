// A real Redis Cluster for the integration tests: REDIS_CLUSTER_NODES ("host:port,…"), which
// test/global-setup.ts sets to a three-master cluster of its own when the environment gives
// none. Tests that need it fail with a clear message when there is none; they never skip.
import { randomUUID } from "node:crypto";
import { Cluster } from "ioredis";
import type { RedisBackendOptions } from "../../src/index.js";

/** The test cluster's nodes, as `redisBackend({ cluster })` takes them. */
export function clusterNodes(): NonNullable<RedisBackendOptions["cluster"]> {
  const nodes = process.env.REDIS_CLUSTER_NODES;
  if (!nodes) {
    const why = process.env.REDIS_CLUSTER_SETUP_ERROR;
    throw new Error(
      "The Redis Cluster tests need a Redis Cluster: set REDIS_CLUSTER_NODES (host:port,…), or " +
        "put redis-server and redis-cli on PATH (Debian: apt-get install redis-server) for the " +
        `test set-up to start one${why ? ` (starting one failed: ${why})` : ""}.`,
    );
  }
  return nodes.split(",").map((address) => {
    const [host, port] = address.trim().split(":");
    return { host: host ?? "", port: Number(port) };
  });
}

/** A client of the test cluster, connected; disconnect it when done. */
export async function clusterClient(): Promise<Cluster> {
  const client = new Cluster(clusterNodes(), {
    lazyConnect: true,
    redisOptions: { maxRetriesPerRequest: 1 },
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

/** A key prefix no other test uses, with a hash tag: every key under it is in one slot. */
export const uniqueClusterPrefix = (): string => `{hxtest-${randomUUID()}}`;

/** Every key under `prefix`, from each master (SCAN sees one node's keys only). */
export async function clusterKeys(client: Cluster, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for (const master of client.nodes("master")) {
    let cursor = "0";
    do {
      const [next, found] = await master.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== "0");
  }
  return keys;
}

/** Deletes every key under `prefix` (all in the slot of its hash tag: one UNLINK serves). */
export async function deleteClusterPrefix(prefix: string): Promise<void> {
  const client = await clusterClient();
  try {
    const keys = await clusterKeys(client, prefix);
    for (let start = 0; start < keys.length; start += 1000) {
      await client.unlink(...keys.slice(start, start + 1000));
    }
  } finally {
    client.disconnect();
  }
}
