// Helpers shared by the runtime benchmark's parent and child processes.
import { fork } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { once } from "node:events";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Redis } from "ioredis";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * The runtime's job options (src/runtime/redis-queues.ts with redisBackend's defaults), so that
 * raw BullMQ jobs are added, retained and retried the same way.
 */
export const RAW_JOB_OPTIONS = Object.freeze({
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000 },
  attempts: 3,
  backoff: { type: "exponential", delay: 100 },
});

export const log = (line) => process.stderr.write(`[bench:runtime] ${line}\n`);

/** `--name N` or `--name=N`, an integer of at least `min` (1 unless given). */
export function option(name, fallback, { min = 1 } = {}) {
  const args = process.argv.slice(2);
  let raw;
  for (let index = 0; index < args.length; index++) {
    if (args[index] === `--${name}`) raw = args[index + 1];
    else if (args[index].startsWith(`--${name}=`)) raw = args[index].slice(name.length + 3);
  }
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`--${name} must be an integer of at least ${min} (got ${raw}).`);
  }
  return value;
}

/** A BullMQ-safe key prefix of its own per benchmark part. */
export const uniquePrefix = (part) => `hxbench-${part}-${randomUUID().slice(0, 8)}`;

export const round = (value, digits = 2) => Number(value.toFixed(digits));

export function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Nearest-rank percentile of `values` (0 < p ≤ 100). */
export function percentile(values, p) {
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** p50 / p99 / mean / max of durations in ms. */
export function summarize(milliseconds) {
  const mean = milliseconds.reduce((sum, each) => sum + each, 0) / milliseconds.length;
  return {
    p50: round(percentile(milliseconds, 50)),
    p99: round(percentile(milliseconds, 99)),
    mean: round(mean),
    max: round(Math.max(...milliseconds)),
    samples: milliseconds.length,
  };
}

export const now = () => performance.now();

export function connect() {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  redis.on("error", (error) => log(`redis error: ${error.message}`));
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

/**
 * Extra Node flags for every child process, from `HARNESSX_BENCH_CHILD_FLAGS` (space-separated):
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`, which NODE_OPTIONS does not take.
 */
function childFlags() {
  return (process.env.HARNESSX_BENCH_CHILD_FLAGS ?? "").split(" ").filter(Boolean);
}

/**
 * A child process speaking a small request/reply protocol over IPC: `request(type, body)`
 * sends `{ type, ...body }` and resolves with the child's next message of the same type.
 */
export async function spawnChild(script, args = [], { expectReady = true, execArgv = [] } = {}) {
  const child = fork(fileURLToPath(script), args, {
    execArgv: ["--expose-gc", ...execArgv, ...childFlags()],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: { ...process.env, REDIS_URL },
  });
  const waiting = new Map();
  const listeners = new Set();
  child.on("message", (message) => {
    for (const listener of listeners) listener(message);
    const queue = waiting.get(message.type);
    const next = queue?.shift();
    if (next) next(message);
  });
  const exited = once(child, "exit");
  const handle = {
    child,
    exited,
    next(type) {
      return new Promise((resolve, reject) => {
        const queue = waiting.get(type) ?? [];
        queue.push(resolve);
        waiting.set(type, queue);
        exited.then(([code]) => reject(new Error(`${script} exited (${code}) before "${type}"`)));
      });
    },
    async request(type, body = {}) {
      const reply = handle.next(type);
      child.send({ type, ...body });
      return reply;
    },
    onMessage(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      if (child.exitCode !== null) return;
      child.send({ type: "close" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  if (expectReady) await handle.next("ready");
  return handle;
}

/** In a child: answers parent requests with `handlers[type](message)`. */
export function serve(handlers) {
  process.on("message", async (message) => {
    const handler = handlers[message.type];
    if (handler === undefined) return;
    try {
      const reply = await handler(message);
      process.send({ type: message.type, ...(reply ?? {}) });
    } catch (error) {
      process.stderr.write(`child ${message.type} failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    }
  });
  // A parent that dies takes its children with it.
  process.on("disconnect", () => process.exit(0));
}

/** Heap after a forced GC (children run with --expose-gc). */
export function settledHeap() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

/** Runs `task(index)` for 0 ≤ index < count with at most `width` in flight. */
export async function pool(count, width, task) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) {
      const index = next++;
      await task(index);
    }
  });
  await Promise.all(lanes);
}

/** SHA1 → name of every BullMQ Lua script (the files ioredis registers them from). */
export async function bullmqScripts() {
  const require = createRequire(import.meta.url);
  const directory = join(dirname(require.resolve("bullmq/package.json")), "dist/esm/scripts");
  const names = new Map();
  for (const file of readdirSync(directory)) {
    if (!/^[a-zA-Z]+-\d+\.js$/.test(file)) continue;
    const module = await import(pathToFileURL(join(directory, file)).href);
    for (const script of Object.values(module)) {
      const sha = createHash("sha1").update(script.content).digest("hex");
      names.set(sha, `bullmq ${script.name}`);
    }
  }
  return names;
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
