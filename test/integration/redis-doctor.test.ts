// `harnessx doctor --redis URL` (runDoctor): a report on a Redis for harnessx, exit code 0 when
// healthy and 1 when something needs fixing.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "../../src/cli/doctor.js";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { STEP_QUEUE } from "../../src/runtime/redis-keys.js";
import { makeAgent, oneToolModel, searchTool, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, startRedisServer, uniquePrefix } from "./redis.js";

const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function doctor(options: {
  redis: string;
  prefix: string;
  json?: boolean;
  strandedAfterMs?: number;
}) {
  let output = "";
  const code = await runDoctor({ ...options, write: (text) => (output += text) });
  return { code, output };
}

async function runtimeOn(prefix: string, workers: boolean) {
  const runtime = new AgentRuntime({
    agents: [
      makeAgent("support", { provider: oneToolModel("search"), tools: [searchTool().tool] }),
    ],
    backend: redisBackend({ url: redisUrl(), prefix }),
    logger: silent,
  });
  await runtime.start({ workers });
  cleanups.push(() => runtime.close({ timeoutMs: 1000 }));
  return runtime;
}

describe("runDoctor", () => {
  it("reports a healthy Redis with the runs of a prefix: exit code 0", async () => {
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const runtime = await runtimeOn(prefix, true);
    await (await runtime.submit("support", "order 1")).result();

    const { code, output } = await doctor({ redis: redisUrl(), prefix, json: true });
    const report = JSON.parse(output) as Record<string, unknown>;
    expect(code).toBe(0);
    expect(report).toMatchObject({
      healthy: true,
      problems: [],
      mode: "standalone",
      evictionPolicy: ["noeviction"],
      storeMarker: true,
      strandedRuns: [],
      queues: { [STEP_QUEUE]: { waiting: 0, oldestWaitingMs: null } },
    });
    expect(report.keys).toMatchObject({ run: 1, store: 1 });
    expect(String(report.version)).toMatch(/^\d+\.\d+/);

    const human = await doctor({ redis: redisUrl(), prefix });
    expect(human.code).toBe(0);
    expect(human.output).toContain("eviction policy: noeviction");
    expect(human.output).toContain("healthy");
  });

  it("names a Redis that may evict keys: exit code 1", async () => {
    const server = await startRedisServer(["--maxmemory-policy", "allkeys-lru"]);
    cleanups.push(() => server.stop());
    const { code, output } = await doctor({ redis: server.url, prefix: "hx" });
    expect(code).toBe(1);
    expect(output).toContain("PROBLEM: maxmemory-policy is 'allkeys-lru'");
    expect(output).toContain("needs fixing");
  });

  it("finds stranded runs and the queue's lag", async () => {
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const submitter = await runtimeOn(prefix, false);
    const handle = await submitter.submit("support", "order 2");
    await new Promise((resolve) => setTimeout(resolve, 20)); // the run is older than 10 ms

    const { code, output } = await doctor({
      redis: redisUrl(),
      prefix,
      json: true,
      strandedAfterMs: 10,
    });
    const report = JSON.parse(output) as {
      strandedRuns: string[];
      queues: Record<string, { waiting: number; oldestWaitingMs: number | null }>;
    };
    expect(code).toBe(1);
    expect(report.strandedRuns).toEqual([handle.runId]);
    expect(report.queues[STEP_QUEUE]?.waiting).toBe(1);
    expect(report.queues[STEP_QUEUE]?.oldestWaitingMs).toBeGreaterThan(0);
  });

  it("exits 1 when Redis cannot be reached", async () => {
    const server = await startRedisServer([]);
    await server.stop();
    const { code, output } = await doctor({ redis: server.url, prefix: "hx" });
    expect(code).toBe(1);
    expect(output).toContain("cannot reach Redis");
    expect(output).toContain("(redis_unreachable)");
    // With a password in the URL, and as JSON: the code, never the password.
    const secretUrl = server.url.replace("redis://", "redis://:doctor-secret-81723@");
    const json = await doctor({ redis: secretUrl, prefix: "hx", json: true });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.output)).toEqual(
      expect.objectContaining({ healthy: false, code: "redis_unreachable" }),
    );
    expect(json.output).not.toContain("doctor-secret-81723");
    expect(json.output).toContain(":***@");
  });
});
