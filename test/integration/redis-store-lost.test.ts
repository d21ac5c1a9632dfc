// A Redis that restarted empty is detected and named (SPEC §8): runs are reported lost
// (`BackendError`, `code: "store_lost"`), not unknown; a Redis that persists nothing is warned
// about at start; and a fresh Redis has the runtime's scripts loaded at start.
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { ACQUIRE_LEASE, SAVE_RUN } from "../../src/runtime/redis-scripts.js";
import { CREATE_RUNS } from "../../src/runtime/redis-submit.js";
import { freePort } from "../support/free-port.js";
import { launchRedisServer, stopProcess } from "../support/redis-server.js";
import { makeAgent, oneToolModel, searchTool, silent } from "./fixtures.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A redis-server that keeps nothing on disk, restartable (empty) on the same port. */
async function volatileRedis() {
  const port = await freePort();
  const launch = () =>
    launchRedisServer(
      port,
      ["--save", "", "--appendonly", "no"].concat(["--maxmemory-policy", "noeviction"]),
    );
  let child: ChildProcess = await launch();
  cleanups.push(() => stopProcess(child, "SIGKILL"));
  return {
    url: `redis://127.0.0.1:${port}`,
    async restartEmpty() {
      await stopProcess(child, "SIGKILL");
      child = await launch();
    },
  };
}

/** A pino logger whose lines the test reads. */
function recordingLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  return { logger: pino({ level: "warn" }, stream), lines };
}

function supportRuntime(url: string, prefix: string, logger = silent) {
  const runtime = new AgentRuntime({
    agents: [
      makeAgent("support", { provider: oneToolModel("search"), tools: [searchTool().tool] }),
    ],
    backend: redisBackend({ url, prefix, commandTimeoutMs: 300 }),
    logger,
  });
  cleanups.push(() => runtime.close({ timeoutMs: 500 }));
  return runtime;
}

describe("redisBackend on a Redis that lost its data", () => {
  it("reports store_lost for the runs it had, instead of RunNotFoundError", async () => {
    const redis = await volatileRedis();
    const runtime = supportRuntime(redis.url, "hx");
    await runtime.start();
    const handle = await runtime.submit("support", "order 1");
    expect((await handle.result()).status).toBe("completed");
    await expect(runtime.get("no-such-run")).rejects.toMatchObject({ code: "run_not_found" });

    await redis.restartEmpty();
    // Until ioredis has reconnected, calls fail as backend_unavailable.
    let error: unknown;
    do {
      error = await runtime.get(handle.runId).then(
        () => undefined,
        (failure: unknown) => failure,
      );
    } while ((error as { code?: string } | undefined)?.code === "backend_unavailable");
    expect(error).toMatchObject({ name: "BackendError", code: "store_lost" });
    await expect(runtime.handle(handle.runId).result()).rejects.toMatchObject({
      code: "store_lost",
    });
    await expect(runtime.cancel(handle.runId)).rejects.toMatchObject({ code: "store_lost" });
    await expect(runtime.list()).rejects.toMatchObject({ code: "store_lost" });
  }, 30_000);
});

describe("redisBackend's start-up checks of persistence", () => {
  it("warns when Redis persists nothing", async () => {
    const redis = await volatileRedis();
    const { logger, lines } = recordingLogger();
    await supportRuntime(redis.url, "hx", logger).start();
    expect(lines.map((line) => line.msg)).toContainEqual(
      expect.stringContaining("Redis persists nothing"),
    );
  });

  it("does not warn when Redis keeps an append-only file", async () => {
    const port = await freePort();
    const dir = await mkdtemp(join(tmpdir(), "harnessx-aof-"));
    const child = await launchRedisServer(
      port,
      ["--dir", dir, "--appendonly", "yes"].concat(["--maxmemory-policy", "noeviction"]),
    );
    cleanups.push(async () => {
      await stopProcess(child, "SIGKILL");
      await rm(dir, { recursive: true, force: true });
    });
    const { logger, lines } = recordingLogger();
    await supportRuntime(`redis://127.0.0.1:${port}`, "hx", logger).start();
    expect(lines.filter((line) => line.msg.includes("persists nothing"))).toEqual([]);
  });
});

describe("a fresh Redis", () => {
  it("has the runtime's scripts in its cache once a runtime started on it", async () => {
    const redis = await volatileRedis();
    const client = new Redis(redis.url);
    cleanups.push(async () => {
      client.disconnect();
    });
    const shas = [CREATE_RUNS, ACQUIRE_LEASE, SAVE_RUN].map((script) => script.sha);
    expect(await client.script("EXISTS", ...shas)).toEqual([0, 0, 0]);

    const runtime = supportRuntime(redis.url, "hx-fresh");
    await runtime.start();
    expect(await client.script("EXISTS", ...shas)).toEqual([1, 1, 1]);
  });
});
