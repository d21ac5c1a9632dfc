// Redis-only behaviour of the durable runtime: server checks, queue hygiene, several runtimes
// (standing in for processes) on one prefix, and recovery from a committed raw result.
import { Job, Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import {
  AgentRuntime,
  BackendError,
  HarnessError,
  Middleware,
  type RedisBackendOptions,
  RUN_RECORD_VERSION,
  type RunEvent,
  redisBackend,
  StoreVersionError,
} from "../../src/index.js";
import {
  collect,
  gate,
  leaseCounters,
  makeAgent,
  observeLeases,
  oneToolModel,
  Runtimes,
  rejection,
  searchTool,
  silent,
} from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, startRedisServer, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const runtimes = new Runtimes();
const prefixes: string[] = [];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await runtimes.closeAll();
  await Promise.all(closers.splice(0).map((close) => close()));
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
});

function freshPrefix(): string {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  return prefix;
}

function backendOn(prefix: string, options: RedisBackendOptions = {}): RunBackend {
  return redisBackend({
    url: redisUrl(),
    prefix,
    lockDurationMs: 2000,
    stalledIntervalMs: 1000,
    ...options,
  });
}

/** A BullMQ queue and its events on one of the runtime's queues, closed after the test. */
async function rawQueue(prefix: string, role: "steps" | "tools") {
  const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
  const name = `harnessx-${role}`;
  const queue = new Queue(name, { connection, prefix });
  const events = new QueueEvents(name, { connection: { url: redisUrl() }, prefix });
  closers.push(async () => {
    await events.close();
    await queue.close();
    connection.disconnect();
  });
  await events.waitUntilReady();
  return { queue, events };
}

const supportAgent = (search = searchTool()) =>
  makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });

describe("redisBackend() server checks", () => {
  it("refuses to start on a Redis whose maxmemory-policy is not noeviction", async () => {
    const server = await startRedisServer(["--maxmemory-policy", "allkeys-lru"]);
    try {
      const runtime = new AgentRuntime({
        agents: [supportAgent()],
        backend: redisBackend({ url: server.url, prefix: freshPrefix() }),
        logger: silent,
      });
      const error = await rejection(runtime.start());
      await runtime.close();

      expect(error).toBeInstanceOf(BackendError);
      expect(HarnessError.isHarnessError(error) && error.code).toBe("backend_failed");
      expect((error as Error).message).toMatch(/allkeys-lru.*noeviction/);
    } finally {
      await server.stop();
    }
  });

  it("fails to start with a clear error when Redis does not answer", async () => {
    const server = await startRedisServer([]);
    const url = server.url;
    await server.stop();
    const runtime = new AgentRuntime({
      agents: [supportAgent()],
      backend: redisBackend({ url, prefix: freshPrefix(), connectTimeoutMs: 1000 }),
      logger: silent,
    });

    const error = await rejection(runtime.start());
    await runtime.close();

    expect(error).toBeInstanceOf(BackendError);
    expect((error as Error).message).toContain(`Cannot reach Redis at ${url}`);
  });
});

describe("redisBackend() queue hygiene", () => {
  it("fails a malformed step payload without retry and keeps processing other runs", async () => {
    const prefix = freshPrefix();
    const search = searchTool();
    const runtime = await runtimes.start([supportAgent(search)], backendOn(prefix));
    const { queue, events } = await rawQueue(prefix, "steps");

    const malformed = await queue.add("step", { run: 42 }, { jobId: "malformed-1", attempts: 3 });
    const failure = await rejection(malformed.waitUntilFinished(events));
    const failed = await Job.fromId(queue, "malformed-1");

    expect(String(failure)).toMatch(/Malformed harnessx-steps job "malformed-1": runId/);
    expect(await failed?.getState()).toBe("failed");
    expect(failed?.attemptsMade).toBe(1);
    const result = await (await runtime.submit("support", "after")).result();
    expect(result.status).toBe("completed");
    expect(search.calls.get("after")).toBe(1);
  });

  it("refuses a run record of another schemaVersion with StoreVersionError", async () => {
    const prefix = freshPrefix();
    const runtime = await runtimes.start([supportAgent()], backendOn(prefix));
    const handle = await runtime.submit("support", "cats");
    expect((await handle.result()).status).toBe("completed");
    const redis = new Redis(redisUrl());
    closers.push(async () => {
      redis.disconnect();
    });
    const key = `${prefix}:run:${handle.runId}`;
    const stored = JSON.parse((await redis.hget(key, "record")) ?? "{}") as Record<string, unknown>;
    expect(stored.schemaVersion).toBe(RUN_RECORD_VERSION);
    const next = RUN_RECORD_VERSION + 1;
    await redis.hset(key, "record", JSON.stringify({ ...stored, schemaVersion: next }));

    const error = await rejection(runtime.handle(handle.runId).result());

    expect(error).toBeInstanceOf(StoreVersionError);
    expect(HarnessError.isHarnessError(error) && error.code).toBe("store_version");
    expect((error as Error).message).toContain(`schemaVersion ${next}`);
    await expect(runtime.get(handle.runId)).rejects.toBeInstanceOf(StoreVersionError);
  });
});

describe("several runtimes on one Redis prefix", () => {
  it("advances a run on one worker at a time across runtimes", async () => {
    const prefix = freshPrefix();
    const llmGate = gate();
    let inFlight = 0;
    let maxInFlight = 0;
    class Exclusive extends Middleware {
      override async beforeLlmCall(
        ...args: Parameters<Middleware["beforeLlmCall"]>
      ): ReturnType<Middleware["beforeLlmCall"]> {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          await llmGate.wait();
          return args;
        } finally {
          inFlight -= 1;
        }
      }
    }
    const search = searchTool();
    const provider = oneToolModel("search");
    const agent = makeAgent("support", {
      provider,
      tools: [search.tool],
      middleware: [new Exclusive()],
    });
    const counters = leaseCounters();
    const first = observeLeases(backendOn(prefix), counters);
    const second = observeLeases(backendOn(prefix), counters);
    const runtimeA = await runtimes.start([agent], first.backend);
    const runtimeB = await runtimes.start([agent], second.backend);

    const handle = await runtimeA.submit("support", "cats");
    await llmGate.entered;
    for (let index = 0; index < 5; index += 1) {
      await first.backend.enqueueStep(handle.runId);
      await second.backend.enqueueStep(handle.runId);
    }
    await counters.waitForBusy(handle.runId, 10);
    llmGate.open();
    const result = await runtimeB.handle(handle.runId).result();

    expect(result.status).toBe("completed");
    expect(maxInFlight).toBe(1);
    expect(provider.callCount).toBe(2);
    expect(search.calls.get("cats")).toBe(1);
  });

  it("cancels and streams a run from a runtime without workers", async () => {
    const prefix = freshPrefix();
    const providerGate = gate();
    const search = searchTool();
    const agent = makeAgent("support", {
      provider: oneToolModel("search", { before: () => providerGate.wait() }),
      tools: [search.tool],
    });
    await runtimes.start([agent], backendOn(prefix));
    const submitter = await runtimes.start([agent], backendOn(prefix), { workers: false });

    const handle = await submitter.submit("support", "cats");
    await providerGate.entered;
    await submitter.cancel(handle.runId);
    providerGate.open();
    const result = await handle.result();
    const events: RunEvent[] = await collect(submitter.handle(handle.runId).events());

    expect(result.status).toBe("cancelled");
    expect(search.total).toBe(0);
    expect(events).toEqual([{ type: "result", result }]);
  });
});

describe("submit and result() on one Redis", () => {
  /**
   * CREATE_RUNS: the runtime's script called with a run's two keys, its hash first. Scripts hand
   * ioredis their keys and arguments as arrays (it flattens them), so read them flat.
   */
  const createsRun = (args: readonly unknown[]) => {
    const [, keyCount, firstKey] = args.flat();
    return Number(keyCount) === 2 && String(firstKey).includes(":run:");
  };

  it("a run whose creation Redis runs after its first step (NOSCRIPT) still runs: the step comes again", async () => {
    const prefix = freshPrefix();
    const { queue } = await rawQueue(prefix, "steps");
    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    closers.push(async () => connection.disconnect());
    // Redis does not know the script: it is sent again in full, and here held back until the
    // run's first step has come and found no run.
    type Send = (...args: unknown[]) => Promise<unknown>;
    const client = connection as unknown as { evalsha: Send; eval: Send };
    const evalsha = client.evalsha.bind(connection);
    const evalScript = client.eval.bind(connection);
    let stepsBeforeRun = -1;
    client.evalsha = (...args) =>
      createsRun(args)
        ? Promise.reject(new Error("NOSCRIPT No matching script."))
        : evalsha(...args);
    client.eval = async (...args) => {
      if (createsRun(args)) {
        for (;;) {
          stepsBeforeRun = (await queue.getJobs(["completed", "failed"])).length;
          if (stepsBeforeRun > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      return evalScript(...args);
    };
    const search = searchTool();
    const runtime = await runtimes.start([supportAgent(search)], backendOn(prefix, { connection }));

    const handle = await runtime.submit("support", "cats");
    const result = await handle.result();

    expect(stepsBeforeRun).toBe(1);
    expect(result.status).toBe("completed");
    expect(search.calls.get("cats")).toBe(1);
  });

  it("result() of a run still going reads its status, not its record", async () => {
    const prefix = freshPrefix();
    await runtimes.start([supportAgent()], backendOn(prefix));
    const backend = backendOn(prefix);
    const runtime = await runtimes.start([supportAgent()], backend, { workers: false });
    const loadRun = backend.loadRun.bind(backend);
    let loads = 0;
    backend.loadRun = (runId) => {
      loads += 1;
      return loadRun(runId);
    };

    const handle = await runtime.submit("support", "cats");
    const result = await handle.result();

    expect(result.status).toBe("completed");
    expect(loads).toBe(0);
    // A finished run's result is its record's.
    expect(await handle.result()).toEqual(result);
    expect(loads).toBe(1);
  });
});

describe("recovery from a committed raw result", () => {
  it("never runs a committed handler again, whatever steps and tool jobs are re-run", async () => {
    const prefix = freshPrefix();
    const handlerGate = gate();
    const search = searchTool({ gate: handlerGate });
    // A long lease: the test itself plays a worker holding the run while duplicates arrive.
    const observed = observeLeases(backendOn(prefix, { lockDurationMs: 20_000 }));
    const runtime = await runtimes.start([supportAgent(search)], observed.backend);
    const tools = await rawQueue(prefix, "tools");
    const steps = await rawQueue(prefix, "steps");

    const handle = await runtime.submit("support", "cats");
    await handlerGate.entered;
    await observed.counters.waitForReleases(handle.runId, 1);
    const lease = await observed.backend.acquireLease(handle.runId);
    if (!lease.acquired) throw new Error("the test could not take the run's lease");
    handlerGate.open();
    await observed.counters.waitForBusy(handle.runId, 1);

    // The raw result is committed and the run still stands at dispatch: a crash here loses
    // nothing. Re-run the tool job (a fresh job id, as after a removed job) and the step.
    expect((await handle.record()).phase).toBe("dispatch");
    const call = { runId: handle.runId, iteration: 1, toolCallId: "call_1" };
    const again = await tools.queue.add("tool", call, { jobId: "tool-again" });
    await again.waitUntilFinished(tools.events);
    const step = await steps.queue.add("step", { runId: handle.runId }, { jobId: "step-again" });
    await step.waitUntilFinished(steps.events);
    expect(search.calls.get("cats")).toBe(1);

    const { wake } = await observed.backend.releaseLease(handle.runId, lease.token);
    expect(wake).toBe(true);
    await observed.backend.enqueueStep(handle.runId);
    const result = await handle.result();

    expect(result.status).toBe("completed");
    expect(result.output).toBe("Answer: Results for cats");
    expect(search.calls.get("cats")).toBe(1);
    const rerun = await tools.queue.add("tool", call, { jobId: "tool-after-end" });
    await rerun.waitUntilFinished(tools.events);
    expect(search.calls.get("cats")).toBe(1);
  });
});
