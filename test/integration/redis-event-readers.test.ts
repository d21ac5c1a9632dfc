// Event readers of the Redis backend: any number of concurrent `events()` tails share one
// blocking connection, each sees its own stream in order, and `close()` ends the waiting ones.
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunBackend, type RunEvent, type RunResult, redisBackend } from "../../src/index.js";
import { collect, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const prefixes: string[] = [];
const backends: RunBackend[] = [];
const clients: Redis[] = [];

afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close({ timeoutMs: 1000 })));
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
  for (const client of clients.splice(0)) client.disconnect();
});

async function startedBackend(connectionName: string): Promise<RunBackend> {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const backend = redisBackend({ url: redisUrl(), prefix, connectionName, lockDurationMs: 2000 });
  backends.push(backend);
  await backend.start({ concurrency: 1, logger: silent });
  return backend;
}

/** The connections Redis has open under `name`. */
async function connectionsNamed(name: string): Promise<number> {
  const redis = new Redis(redisUrl());
  clients.push(redis);
  const list = await redis.client("LIST");
  return String(list)
    .split("\n")
    .filter((line) => line.includes(` name=${name} `)).length;
}

/** A run's final event, which ends its stream. */
const finished = (runId: string): RunEvent => {
  const result: RunResult = {
    runId,
    sessionId: "session",
    status: "completed",
    output: runId,
    error: null,
    pending: [],
    usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    iterations: 1,
    messages: [],
  };
  return { type: "result", result };
};

const toolStart = (id: string): RunEvent => ({
  type: "tool_start",
  toolCall: { id, name: "search", input: {} },
});

describe("redisBackend event readers", () => {
  it("serves many concurrent readers, attached before and after the events, on one blocking connection", async () => {
    const name = `hx-readers-${Math.random().toString(36).slice(2)}`;
    const backend = await startedBackend(name);
    const runIds = Array.from({ length: 40 }, (_unused, index) => `run-${index}`);
    await backend.publish("run-0", toolStart("early"));
    const early = runIds.map((runId) => collect(backend.events(runId)));
    for (const runId of runIds) {
      await backend.publish(runId, toolStart(`${runId}-a`));
    }
    const late = runIds.map((runId) => collect(backend.events(runId)));
    await Promise.all(
      runIds.map(async (runId) => {
        await backend.publish(runId, toolStart(`${runId}-b`));
      }),
    );
    // Every reader waits now: the run-store and queue connections and one shared reader, not
    // one per reader.
    const connections = await connectionsNamed(name);
    expect(connections).toBeGreaterThanOrEqual(1);
    expect(connections).toBeLessThanOrEqual(3);
    for (const runId of runIds) {
      await backend.publish(runId, finished(runId));
    }
    const expected = (runId: string): RunEvent[] => [
      ...(runId === "run-0" ? [toolStart("early")] : []),
      toolStart(`${runId}-a`),
      toolStart(`${runId}-b`),
      finished(runId),
    ];
    expect(await Promise.all(early)).toEqual(runIds.map(expected));
    expect(await Promise.all(late)).toEqual(runIds.map(expected));
  });

  it("close() ends readers that are waiting", async () => {
    const backend = await startedBackend("hx-readers-close");
    await backend.publish("run-open", toolStart("first"));
    const reading = backend.events("run-open")[Symbol.asyncIterator]();
    expect(await reading.next()).toEqual({ done: false, value: toolStart("first") });
    const waiting = reading.next();
    await backend.close({ timeoutMs: 1000 });
    expect(await waiting).toEqual({ done: true, value: undefined });
  });
});
