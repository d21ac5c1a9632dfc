import { Cluster, Redis } from "ioredis";

/** A connection to one Redis server or to a Redis Cluster: the commands harnessx sends work on both. */
export type RedisClient = Redis | Cluster;

export interface ClusterNode {
  host: string;
  port: number;
}

/** Where the backend's Redis is: one server's URL, or a Redis Cluster's startup nodes. */
export type RedisTarget = { url: string } | { cluster: readonly ClusterNode[] };

/** A new, not yet connected client of `target`. */
export function connectRedis(
  target: RedisTarget,
  options: { connectionName: string; autoPipelining: boolean },
): RedisClient {
  if ("url" in target) {
    return new Redis(target.url, {
      maxRetriesPerRequest: null,
      lazyConnect: true,
      connectionName: options.connectionName,
      enableAutoPipelining: options.autoPipelining,
    });
  }
  return new Cluster(
    target.cluster.map((node) => ({ ...node })),
    {
      lazyConnect: true,
      enableAutoPipelining: options.autoPipelining,
      // BullMQ reads these from a cluster's per-node options.
      redisOptions: { maxRetriesPerRequest: null, connectionName: options.connectionName },
    },
  );
}

/** A new connection like `base`, for pub/sub: not connected yet and not auto-pipelined. */
export function subscriberOf(base: RedisClient): RedisClient {
  const override = { enableAutoPipelining: false, lazyConnect: true };
  return base instanceof Cluster ? base.duplicate([], override) : base.duplicate(override);
}

/** The servers that hold the data: every master of a cluster, or the one server. */
export function mastersOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes("master") : [client];
}

/** `target` for messages: "Redis at <url>" or "Redis Cluster at <startup nodes>". */
export function describeTarget(target: RedisTarget): string {
  if ("url" in target) return `Redis at ${target.url}`;
  const nodes = target.cluster.map((node) => `${node.host}:${node.port}`);
  return `Redis Cluster at ${nodes.join(", ")}`;
}

/**
 * True when every key starting with `prefix` has its hash slot set by the prefix: Redis hashes
 * only what is between the key's first "{" and the first "}" after it, when that is not empty.
 */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf("{");
  return open >= 0 && prefix.indexOf("}", open + 1) > open + 1;
}
