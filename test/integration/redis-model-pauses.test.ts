// A model paused (`rate_limited`) in one process is paused in every other: the Redis backend's
// limiter learns of pauses from their announcements instead of reading Redis before each call,
// so a process that already asked about the model must hear of a pause set afterwards.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import { redisBackend } from "../../src/index.js";
import { silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const started: RunBackend[] = [];
const prefixes: string[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((backend) => backend.close({ timeoutMs: 1000 })));
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
});

/** Two backends on one prefix, as two worker processes would have them (no job comes). */
async function twoProcesses(): Promise<[RunBackend, RunBackend]> {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const backends = [0, 1].map(() => redisBackend({ url: redisUrl(), prefix }));
  const processors = { step: async () => undefined, tool: async () => undefined };
  for (const backend of backends) {
    started.push(backend);
    await backend.start({ concurrency: 1, logger: silent, processors, onCancel: () => {} });
  }
  return backends as [RunBackend, RunBackend];
}

/** How long a call of model `key` must wait on `backend` (0: it may go now). */
async function waitOf(backend: RunBackend, key: string): Promise<number> {
  const admission = await backend.modelLimiter().take(key, undefined, 0);
  return admission.admitted ? 0 : admission.waitMs;
}

describe("model pauses on redisBackend()", () => {
  it("reach a process that asked about the model before the pause was set", async () => {
    const [pausing, other] = await twoProcesses();
    const key = "scripted:model-a";
    expect(await waitOf(other, key)).toBe(0);
    expect(await waitOf(pausing, key)).toBe(0);

    await pausing.modelLimiter().pause(key, 5000);

    expect(await waitOf(pausing, key)).toBeGreaterThan(0);
    await vi.waitFor(async () => {
      expect(await waitOf(other, key)).toBeGreaterThan(0);
    });
    // Another model is not paused.
    expect(await waitOf(other, "scripted:model-b")).toBe(0);
  });

  it("are read from Redis by a process that starts asking after the pause was set", async () => {
    const [pausing, other] = await twoProcesses();
    const key = "scripted:model-a";
    await pausing.modelLimiter().pause(key, 5000);
    const waitMs = await waitOf(other, key);
    expect(waitMs).toBeGreaterThan(0);
    expect(waitMs).toBeLessThanOrEqual(5000);
  });

  it("end when the pause runs out", async () => {
    const [pausing, other] = await twoProcesses();
    const key = "scripted:model-a";
    expect(await waitOf(other, key)).toBe(0);
    await pausing.modelLimiter().pause(key, 2000);
    await vi.waitFor(async () => {
      expect(await waitOf(other, key)).toBeGreaterThan(0);
    });
    await vi.waitFor(
      async () => {
        expect(await waitOf(other, key)).toBe(0);
        expect(await waitOf(pausing, key)).toBe(0);
      },
      { timeout: 5000, interval: 100 },
    );
  });
});
