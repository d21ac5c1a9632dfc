// Helpers of the runtime benchmark's parent and child processes: its own below, the shared ones
// (bench/lib/) re-exported so that every runtime child imports from one place.
import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

export * from "../lib/children.mjs";
export * from "../lib/redis.mjs";
export * from "../lib/stats.mjs";

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
