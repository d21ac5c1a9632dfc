// The run store on Redis, beyond the backend contract: one cluster slot per prefix in braces.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { redisBackend } from "../../src/index.js";
import { approvalAgent, Runtimes } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const runtimes = new Runtimes();
const prefixes: string[] = [];
const clients: Redis[] = [];

afterEach(async () => {
  await runtimes.closeAll();
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
  for (const client of clients.splice(0)) client.disconnect();
});

describe("the run store on redisBackend() with a prefix in braces", () => {
  it("starts every key with the prefix, so a cluster keeps them in one slot", async () => {
    const prefix = `{hxtest-${randomUUID().slice(0, 8)}}`;
    prefixes.push(prefix);
    const { agent } = approvalAgent();
    const runtime = await runtimes.start([agent], redisBackend({ url: redisUrl(), prefix }));
    const handle = await runtime.submit("ops", "old.log", { sessionId: "s-1" });
    expect((await handle.result()).status).toBe("awaiting_approval");
    await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
    expect((await handle.result()).status).toBe("completed");
    expect((await runtime.list({ sessionId: "s-1", status: "completed" })).runs).toHaveLength(1);
    expect((await runtime.get(handle.runId)).decisions).toHaveLength(1);

    const redis = new Redis(redisUrl());
    clients.push(redis);
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, found] = await redis.scan(cursor, "MATCH", `*${handle.runId}*`, "COUNT", 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== "0");
    const indexes = await redis.keys(`${prefix}:idx:*`);
    expect(keys.length).toBeGreaterThan(3);
    expect(indexes.length).toBeGreaterThan(3);
    for (const key of [...keys, ...indexes]) expect(key.startsWith(`${prefix}:`)).toBe(true);

    expect(await runtime.prune({ finishedBefore: Date.now() + 1 })).toEqual({
      deleted: 1,
      unreadable: 0,
    });
    expect((await runtime.list()).runs).toEqual([]);
  });
});
