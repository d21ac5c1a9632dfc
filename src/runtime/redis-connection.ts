import { Cluster, Redis } from "./load-ioredis.js";

/** A connection to one Redis server or to a Redis Cluster: the commands harnessx sends work on both. */
export type RedisClient = Redis | Cluster;

export interface ClusterNode {
  host: string;
  port: number;
}

/** Where the backend's Redis is: one server's URL, or a Redis Cluster's startup nodes. */
export type RedisTarget = { url: string } | { cluster: readonly ClusterNode[] };

/**
 * How a command fails when Redis does not answer: after `commandTimeoutMs`, or after a few
 * reconnection attempts for a command queued while the connection was down. A Cluster that is
 * not ready refuses commands at once (its own queue has no time bound).
 */
const failFast = (commandTimeoutMs: number) =>
  ({ commandTimeout: commandTimeoutMs, maxRetriesPerRequest: 2 }) as const;

/**
 * A new, not yet connected client of `target` for commands that must fail fast (the run store,
 * the queues' adds). BullMQ's workers get their own connection (`workerConnectionOf`).
 */
export function connectRedis(
  target: RedisTarget,
  options: { connectionName: string; autoPipelining: boolean; commandTimeoutMs: number },
): RedisClient {
  if ("url" in target) {
    return new Redis(target.url, {
      ...failFast(options.commandTimeoutMs),
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
      enableOfflineQueue: false,
      redisOptions: {
        ...failFast(options.commandTimeoutMs),
        connectionName: options.connectionName,
      },
    },
  );
}

/**
 * A connection like `base` for BullMQ's workers, as BullMQ requires: no command timeout (its
 * blocking connection is a copy of it, and blocks for seconds) and `maxRetriesPerRequest: null`
 * (it waits out an outage, then goes on). Not connected yet.
 */
export function workerConnectionOf(base: RedisClient): RedisClient {
  const patient = { commandTimeout: undefined, maxRetriesPerRequest: null };
  if (base instanceof Cluster) {
    return base.duplicate([], {
      lazyConnect: true,
      enableAutoPipelining: false,
      enableOfflineQueue: true,
      // BullMQ reads these from a cluster's per-node options.
      redisOptions: { ...base.options.redisOptions, ...patient },
    });
  }
  return base.duplicate({ ...patient, lazyConnect: true, enableAutoPipelining: false });
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
