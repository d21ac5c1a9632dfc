// Redis helpers of the benchmarks: connections, keys under a prefix, memory, counters, CPU.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A BullMQ-safe key prefix of its own per benchmark part. */
export const uniquePrefix = (part) => `hxbench-${part}-${randomUUID().slice(0, 8)}`;

export function connect() {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  redis.on("error", (error) => process.stderr.write(`[bench] redis error: ${error.message}\n`));
  return redis;
}

/** Every key under `prefix` (SCAN). */
export async function keysUnder(redis, prefix) {
  const found = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 5000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== "0");
  return found;
}

/** Deletes every key under `prefix`; returns how many there were. */
export async function deletePrefix(redis, prefix) {
  const keys = await keysUnder(redis, prefix);
  for (let index = 0; index < keys.length; index += 1000) {
    await redis.unlink(...keys.slice(index, index + 1000));
  }
  return keys.length;
}

/**
 * `MEMORY USAGE … SAMPLES 0` (every element counted) of every key under `prefix`, summed by
 * the key's kind: the first segment after the prefix (`run`, `events`, `steps` …).
 */
export async function memoryByKind(redis, prefix) {
  const keys = await keysUnder(redis, prefix);
  const byKind = {};
  let total = 0;
  for (let index = 0; index < keys.length; index += 1000) {
    const slice = keys.slice(index, index + 1000);
    const pipeline = redis.pipeline();
    for (const key of slice) pipeline.memory("USAGE", key, "SAMPLES", "0");
    const replies = await pipeline.exec();
    slice.forEach((key, position) => {
      const bytes = Number(replies[position][1] ?? 0);
      const kind = keyKind(key.slice(prefix.length + 1));
      const entry = byKind[kind] ?? { keys: 0, bytes: 0 };
      byKind[kind] = entry;
      entry.keys++;
      entry.bytes += bytes;
      total += bytes;
    });
  }
  return { keys: keys.length, bytes: total, byKind };
}

const QUEUE_KEYS = new Set(["wait", "active", "completed", "failed", "delayed", "paused"]);

/**
 * `run`, `events`, `fence` … for the run store; `<queue>:<job>` for a BullMQ job hash (its
 * id is the last segment), `<queue>:<name>` for a queue's own keys (wait, events, meta …).
 */
function keyKind(rest) {
  const [first, second, ...more] = rest.split(":");
  if (!QUEUES.has(first) || second === undefined) return first;
  if (QUEUE_KEYS.has(second) || /^[a-z-]+$/.test(second)) return `${first}:${second}`;
  return more.length === 0 ? `${first}:<job>` : `${first}:<job>:${more.join(":")}`;
}

/** Names of the BullMQ queues used in this benchmark (the runtime's and the raw baseline's). */
export const QUEUES = new Set(["steps", "tools", "waiting"]);

export async function usedMemory(redis) {
  const info = await redis.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

/** Sum of a numeric counter key (BullMQ's `<prefix>:<queue>:id`, INCR'd by every add). */
export async function counter(redis, key) {
  return Number((await redis.get(key)) ?? 0);
}

/** `INFO commandstats` as a map: command → { calls, usec }. */
export async function commandStats(redis) {
  const info = await redis.info("commandstats");
  const stats = new Map();
  for (const match of info.matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g)) {
    stats.set(match[1], { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}

/** redis-server's CPU seconds so far (`INFO cpu`: system + user). */
export async function cpuSeconds(redis) {
  const info = await redis.info("cpu");
  const field = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return field("used_cpu_sys") + field("used_cpu_user");
}
