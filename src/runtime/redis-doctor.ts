import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import { Cluster, Redis } from "./load-ioredis.js";
import { mastersOf, type RedisClient } from "./redis-connection.js";
import { findDecidedStepless } from "./redis-decided-stepless.js";
import { MAINTENANCE_QUEUE, redisKeys, STEP_QUEUE, TOOL_QUEUE } from "./redis-keys.js";
import { findStrandedRuns } from "./redis-stranded.js";

export interface RedisDoctorOptions {
  /** The Redis URL (a node of a Redis Cluster works too: the doctor finds the cluster). */
  redis: string;
  /** @defaultValue "hx" ("{hx}" on a cluster) */
  prefix?: string;
  /** As the backend's option of the same name. @defaultValue 300000 */
  strandedAfterMs?: number;
  /** A queue whose oldest waiting job is older than this is a warning. @defaultValue 60000 */
  lagWarningMs?: number;
  /** @defaultValue 5000 */
  connectTimeoutMs?: number;
  /**
   * The store id (`storeId` of an earlier report) the operator recorded while the store was
   * known good. A marker missing or different is a problem: Redis lost its data, and a runtime
   * that started since wrote a fresh marker, which no runtime can tell from a first start.
   */
  expectStore?: string;
}

export interface QueueHealth {
  waiting: number;
  /** How long the oldest waiting job has waited (ms); null when none waits. */
  oldestWaitingMs: number | null;
}

/** What `diagnoseRedis` found. `healthy` is false exactly when `problems` is not empty. */
export interface RedisDoctorReport {
  healthy: boolean;
  /** What stops harnessx from working right on this Redis. */
  problems: string[];
  /** What deserves a look but does not stop it. */
  warnings: string[];
  prefix: string;
  version: string | null;
  mode: "standalone" | "cluster";
  /** Per server that holds data; null where CONFIG is refused. */
  evictionPolicy: Array<string | null>;
  persistence: Array<{ save: string; appendonly: string } | null>;
  storeMarker: boolean;
  /** The store marker's value: the id of this store's life, new after it lost its data. */
  storeId: string | null;
  /** Keys under the prefix by kind (the part after the prefix: run, idx, events, steps, …). */
  keys: Record<string, number>;
  /**
   * Runs queued or running with no lease, or waiting for children that all finished with no
   * wake-up, unsaved for `strandedAfterMs` (at most 100 listed).
   */
  strandedRuns: string[];
  /**
   * Runs awaiting approval with a call decided over `strandedAfterMs` ago and still asked, with
   * no lease: the step that applies the decision was lost (at most 100 listed).
   */
  decidedRuns: string[];
  queues: Record<string, QueueHealth>;
}

const QUEUES = [STEP_QUEUE, TOOL_QUEUE, MAINTENANCE_QUEUE];

/**
 * Checks a Redis for harnessx: its eviction policy, persistence, version and mode, the keys
 * under the prefix, stranded runs (as the reconciler finds them), queue lag and the store
 * marker (against `expectStore` when given). Read-only: it writes nothing.
 */
export async function diagnoseRedis(options: RedisDoctorOptions): Promise<RedisDoctorReport> {
  const probe = new Redis(options.redis, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    commandTimeout: options.connectTimeoutMs ?? 5000,
    retryStrategy: () => null,
  });
  probe.on("error", () => {});
  let client: RedisClient = probe;
  try {
    await probe.connect();
    const clustered = /cluster_enabled:1/.test(await probe.info("cluster"));
    if (clustered) {
      const { host, port } = probe.options;
      client = new Cluster([{ host: host ?? "127.0.0.1", port: port ?? 6379 }], {
        lazyConnect: true,
        redisOptions: { maxRetriesPerRequest: 1, commandTimeout: options.connectTimeoutMs ?? 5000 },
      });
      client.on("error", () => {});
      await client.connect();
    }
    return await examine(client, clustered, options);
  } finally {
    probe.disconnect();
    if (client !== probe) client.disconnect();
  }
}

async function examine(
  client: RedisClient,
  clustered: boolean,
  options: RedisDoctorOptions,
): Promise<RedisDoctorReport> {
  const prefix = options.prefix ?? (clustered ? "{hx}" : "hx");
  const keys = redisKeys(prefix);
  const problems: string[] = [];
  const warnings: string[] = [];
  const masters = mastersOf(client);

  const versionLine = /redis_version:([^\r\n]+)/.exec(await (masters[0] ?? client).info("server"));
  const version = versionLine?.[1] ?? null;
  if (version !== null && Number(version.split(".")[0]) < 6) {
    problems.push(`Redis ${version} is too old: BullMQ needs Redis 6.2 or later.`);
  }

  const evictionPolicy = await Promise.all(
    masters.map((server) => configValue(server, "maxmemory-policy")),
  );
  for (const policy of evictionPolicy) {
    if (policy === null)
      warnings.push("CONFIG GET is refused: the eviction policy cannot be checked.");
    else if (policy !== "noeviction") {
      problems.push(
        `maxmemory-policy is '${policy}': Redis may evict runs and jobs. Set 'noeviction'.`,
      );
    }
  }
  const persistence = await Promise.all(
    masters.map(async (server) => {
      const save = await configValue(server, "save");
      const appendonly = await configValue(server, "appendonly");
      return save === null || appendonly === null ? null : { save, appendonly };
    }),
  );
  if (persistence.some((each) => each !== null && each.save === "" && each.appendonly === "no")) {
    warnings.push("Redis persists nothing (save '' and appendonly no): a restart loses every run.");
  }

  const counted = await countKeys(masters, prefix);
  const storeId = await client.get(keys.store);
  const storeMarker = storeId !== null;
  if (options.expectStore !== undefined && storeId !== options.expectStore) {
    problems.push(
      `The store marker is ${storeId === null ? "missing" : `"${storeId}"`}, not the expected "${options.expectStore}": Redis lost its data (restarted empty, flushed, or a replica that never synced was promoted), so the runs stored before are lost, not unknown.`,
    );
  }
  if (!storeMarker && (counted.run ?? 0) > 0) {
    problems.push(`Runs are stored under "${prefix}" but its store marker is missing.`);
  } else if (!storeMarker) {
    warnings.push(`No runtime has started on prefix "${prefix}" (no store marker).`);
  }

  const strandedRuns = (
    await findStrandedRuns(client, keys, {
      now: Date.now(),
      idleMs: options.strandedAfterMs ?? 300_000,
      limit: 100,
    })
  ).map((run) => run.runId);
  if (strandedRuns.length > 0) {
    problems.push(
      `${strandedRuns.length} run(s) are queued or running with no job working on them, or waiting for children that all finished with no wake-up (the reconciler steps them again when workers run).`,
    );
  }

  const decidedRuns = (
    await findDecidedStepless(client, keys, {
      now: Date.now(),
      idleMs: options.strandedAfterMs ?? 300_000,
      limit: 100,
    })
  ).map((run) => run.runId);
  if (decidedRuns.length > 0) {
    problems.push(
      `${decidedRuns.length} run(s) await approval with a decision made but no step to apply it (the reconciler steps them when workers run).`,
    );
  }

  const queues: Record<string, QueueHealth> = {};
  for (const queue of QUEUES) {
    const health = await queueHealth(client, `${prefix}:${queue}`);
    queues[queue] = health;
    if (
      health.oldestWaitingMs !== null &&
      health.oldestWaitingMs > (options.lagWarningMs ?? 60_000)
    ) {
      warnings.push(
        `The ${queue} queue's oldest job has waited ${Math.round(health.oldestWaitingMs / 1000)} s: add workers or concurrency.`,
      );
    }
  }

  return {
    healthy: problems.length === 0,
    problems,
    warnings,
    prefix,
    version,
    mode: clustered ? "cluster" : "standalone",
    evictionPolicy,
    persistence,
    storeMarker,
    storeId,
    keys: counted,
    strandedRuns,
    decidedRuns,
    queues,
  };
}

const ConfigReply = lazySchema(() => z.array(z.string()));

async function configValue(server: Redis, name: string): Promise<string | null> {
  try {
    return ConfigReply.parse(await server.config("GET", name))[1] ?? null;
  } catch {
    return null;
  }
}

/** Keys under `prefix` by kind, over every server that holds data. */
async function countKeys(
  masters: readonly Redis[],
  prefix: string,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const server of masters) {
    let cursor = "0";
    do {
      const [next, found] = await server.scan(
        cursor,
        "MATCH",
        `${escapeGlob(prefix)}:*`,
        "COUNT",
        1000,
      );
      cursor = next;
      for (const key of found) {
        const kind = key.slice(prefix.length + 1).split(":")[0] ?? "";
        counts[kind] = (counts[kind] ?? 0) + 1;
      }
    } while (cursor !== "0");
  }
  return { ...counts };
}

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&");

/**
 * A BullMQ queue's waiting jobs and the age of the oldest: BullMQ pushes new jobs on the left
 * of `<queue>:wait` and workers take them from the right, so the oldest is the last entry.
 */
async function queueHealth(client: RedisClient, queueKey: string): Promise<QueueHealth> {
  const waiting = await client.llen(`${queueKey}:wait`);
  const oldest = await client.lindex(`${queueKey}:wait`, -1);
  if (oldest === null) return { waiting, oldestWaitingMs: null };
  const timestamp = Number(await client.hget(`${queueKey}:${oldest}`, "timestamp"));
  return {
    waiting,
    oldestWaitingMs: Number.isFinite(timestamp) && timestamp > 0 ? Date.now() - timestamp : null,
  };
}
