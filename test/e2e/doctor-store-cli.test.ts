// `harnessx doctor --expect-store ID` from the built package: a store marker missing or other
// than the id recorded while the store was known good is a problem (exit 1), so a store lost
// and re-marked by a new process is caught from outside (README "Operating on Redis").
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "../integration/redis.js";
import { harnessx } from "../support/cli.js";

const prefix = uniquePrefix();

beforeAll(async () => {
  await requireRedis();
});

afterAll(async () => {
  await deletePrefix(prefix);
});

describe("harnessx doctor --expect-store", { timeout: 30_000 }, () => {
  it("passes on the expected store id and fails, naming the loss, on another", async () => {
    const redis = new Redis(redisUrl());
    try {
      await redis.set(`${prefix}:store`, "store-before");
    } finally {
      redis.disconnect();
    }
    const target = ["doctor", "--redis", redisUrl(), "--prefix", prefix, "--json"];
    const kept = await harnessx([...target, "--expect-store", "store-before"]);
    expect(JSON.parse(kept.stdout)).toMatchObject({ storeId: "store-before", problems: [] });
    expect(kept.code).toBe(0);

    const lost = await harnessx([...target, "--expect-store", "store-earlier"]);
    expect(lost.code).toBe(1);
    expect(JSON.parse(lost.stdout)).toMatchObject({
      healthy: false,
      storeId: "store-before",
      problems: [expect.stringContaining('not the expected "store-earlier": Redis lost its data')],
    });
  });
});
