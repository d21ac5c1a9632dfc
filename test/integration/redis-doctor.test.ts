// `harnessx doctor --redis URL` (runDoctor): a report on a Redis for harnessx, exit code 0 when
// healthy and 1 when something needs fixing.
import type { ChildProcess } from "node:child_process";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "../../src/cli/doctor.js";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { STEP_QUEUE } from "../../src/runtime/redis-keys.js";
import { freePort } from "../support/free-port.js";
import { launchRedisServer, stopProcess } from "../support/redis-server.js";
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
  expectStore?: string;
}) {
  let output = "";
  const code = await runDoctor({ ...options, write: (text) => (output += text) });
  return { code, output };
}

async function runtimeOn(prefix: string, workers: boolean, url = redisUrl()) {
  const runtime = new AgentRuntime({
    agents: [
      makeAgent("support", { provider: oneToolModel("search"), tools: [searchTool().tool] }),
    ],
    backend: redisBackend({ url, prefix }),
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

  it("with --expect-store, catches a store that lost its data and was re-marked by a new process", async () => {
    // A redis-server that keeps nothing, restartable empty on the same port.
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const launch = () =>
      launchRedisServer(port, [
        "--save",
        "",
        "--appendonly",
        "no",
        "--maxmemory-policy",
        "noeviction",
      ]);
    let server: ChildProcess = await launch();
    cleanups.push(() => stopProcess(server, "SIGKILL"));
    const first = await runtimeOn("hx", true, url);
    const done = await first.submit("support", "order 7");
    expect((await done.result()).status).toBe("completed");
    const before = JSON.parse((await doctor({ redis: url, prefix: "hx", json: true })).output) as {
      storeId: string | null;
    };
    expect(before.storeId).toMatch(/^[0-9a-f-]{36}$/);
    const storeId = before.storeId ?? "";
    expect((await doctor({ redis: url, prefix: "hx", expectStore: storeId })).code).toBe(0);
    await first.close({ timeoutMs: 1000 });

    await stopProcess(server, "SIGKILL");
    server = await launch();
    // A new process cannot tell this store from a first start: it writes a fresh marker, and
    // the lost run reads as unknown (the limit README "Operating on Redis" names).
    const second = await runtimeOn("hx", false, url);
    await expect(second.get(done.runId)).rejects.toMatchObject({ code: "run_not_found" });
    expect((await doctor({ redis: url, prefix: "hx" })).code).toBe(0);

    const after = await doctor({ redis: url, prefix: "hx", json: true, expectStore: storeId });
    const report = JSON.parse(after.output) as { storeId: string | null; problems: string[] };
    expect(after.code).toBe(1);
    expect(report.storeId).not.toBe(storeId);
    expect(report.problems).toEqual([
      expect.stringContaining(`not the expected "${storeId}": Redis lost its data`),
    ]);
    const human = await doctor({ redis: url, prefix: "hx", expectStore: storeId });
    expect(human.output).toContain(`store marker: present (store id ${report.storeId ?? ""})`);
    expect(human.output).toContain("PROBLEM: The store marker is");
  });
});
