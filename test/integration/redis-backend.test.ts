import { Redis } from "ioredis";
import { beforeAll } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import { redisBackend } from "../../src/index.js";
import { describeBackendContract } from "./backend-contract.js";
import { deletePrefix, keysUnder, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

const prefixes: string[] = [];

beforeAll(async () => {
  await requireRedis();
});

describeBackendContract("redisBackend()", {
  create: (): RunBackend => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    return redisBackend({
      url: redisUrl(),
      prefix,
      lockDurationMs: 2000,
      stalledIntervalMs: 1000,
    });
  },
  cleanup: async () => {
    await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
  },
  storedKeys: () => keysUnder(prefixes.at(-1) ?? ""),
  editStored: async (runId, field, edit) => {
    const redis = new Redis(redisUrl());
    try {
      const key = `${prefixes.at(-1) ?? ""}:run:${runId}`;
      await redis.hset(key, field, edit((await redis.hget(key, field)) ?? ""));
    } finally {
      redis.disconnect();
    }
  },
});
