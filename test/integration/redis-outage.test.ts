// Redis down after start (SPEC §8): every runtime call (recording, prune and delete too) rejects
// within `commandTimeoutMs` with `BackendError`, `code: "backend_unavailable"`; nothing waits
// forever; once Redis is back, the same runtime goes on.
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { freePort } from "../support/free-port.js";
import { launchRedisServer, stopProcess } from "../support/redis-server.js";
import { approvalAgent, makeAgent, oneToolModel, searchTool, silent } from "./fixtures.js";

/** A generous bound for a call that must settle: reaching it means the call hung. */
const HUNG_AFTER_MS = 20_000;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A redis-server of the test's own that keeps its data (append-only) across a stop and start. */
async function ownRedis() {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "harnessx-outage-"));
  const launch = () =>
    launchRedisServer(
      port,
      ["--dir", dir, "--appendonly", "yes", "--save", ""].concat([
        "--maxmemory-policy",
        "noeviction",
      ]),
    );
  let child: ChildProcess | undefined = await launch();
  cleanups.push(async () => {
    if (child !== undefined) await stopProcess(child, "SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child !== undefined) await stopProcess(child, "SIGTERM");
      child = undefined;
    },
    async start() {
      child = await launch();
    },
  };
}

/** The error `call` rejects with, or "hung" when the bound comes first. */
async function rejection(call: () => Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("hung"), HUNG_AFTER_MS);
  });
  try {
    return await Promise.race([
      call().then(
        () => "resolved",
        (error: unknown) => error,
      ),
      bound,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const unavailable = { name: "BackendError", code: "backend_unavailable" };

describe("redisBackend when Redis stops answering", () => {
  it("rejects every runtime call with backend_unavailable, then recovers", async () => {
    const redis = await ownRedis();
    const search = searchTool();
    const ops = approvalAgent();
    const runtime = new AgentRuntime({
      agents: [
        makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] }),
        ops.agent,
      ],
      backend: redisBackend({ url: redis.url, prefix: "hx", commandTimeoutMs: 300 }),
      logger: silent,
    });
    await runtime.start();
    cleanups.push(() => runtime.close({ timeoutMs: 500 }));
    const done = await runtime.submit("support", "order 1");
    expect((await done.result()).status).toBe("completed");
    const parked = await runtime.submit("ops", "/tmp/a");
    const pending = (await parked.result()).pending[0]?.toolCallId ?? "";

    await redis.stop();
    const calls: Record<string, () => Promise<unknown>> = {
      submit: () => runtime.submit("support", "order 2"),
      list: () => runtime.list(),
      get: () => runtime.get(done.runId),
      recording: () => runtime.recording(done.runId),
      prune: () => runtime.prune({ finishedBefore: Date.now() }),
      delete: () => runtime.delete(done.runId),
      deleteSession: () => runtime.deleteSession("no-such-session"),
      approve: () => runtime.approve(parked.runId, pending, { by: "test" }),
      result: () => runtime.handle(parked.runId).result(),
      cancel: () => runtime.cancel(parked.runId),
      events: async () => {
        for await (const _event of runtime.handle(done.runId).events()) {
          // reading is the call
        }
      },
    };
    for (const [name, call] of Object.entries(calls)) {
      const error = await rejection(call);
      expect({ name, error }).toMatchObject({ name, error: unavailable });
    }

    await redis.start();
    // ioredis reconnects with a back-off of up to 2 s: calls fail fast until it has.
    while ((await rejection(() => runtime.list())) !== "resolved") {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const again = await runtime.submit("support", "order 3");
    expect((await again.result()).output).toBe("Answer: Results for order 3");
    expect((await runtime.get(done.runId)).status).toBe("completed");
  }, 60_000);
});
