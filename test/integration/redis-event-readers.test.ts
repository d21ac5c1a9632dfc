// Event readers of the Redis backend: any number of concurrent `events()` tails share one
// subscriber connection, each sees its own run's events in order, a run keeps its last
// `maxEventsPerRun` events (those its children's stores append too), a wake-up lost with a
// dropped connection is made up for, the events a wake-up carries are taken without reading
// the list, and `close()` ends the waiting ones.
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import { type RunEvent, type RunResult, redisBackend } from "../../src/index.js";
import { storedRun } from "../support/run-records.js";
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

async function startedBackend(
  connectionName: string,
  options: { maxEventsPerRun?: number } = {},
): Promise<RunBackend> {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const backend = redisBackend({
    url: redisUrl(),
    prefix,
    connectionName,
    lockDurationMs: 2000,
    ...options,
  });
  backends.push(backend);
  await backend.start({ concurrency: 1, logger: silent });
  return backend;
}

/** The connections Redis has open under `name`, as CLIENT LIST lines. */
async function clientsNamed(name: string): Promise<string[]> {
  const redis = new Redis(redisUrl());
  clients.push(redis);
  const list = await redis.client("LIST");
  return String(list)
    .split("\n")
    .filter((line) => line.includes(` name=${name} `));
}

const connectionsNamed = async (name: string): Promise<number> => (await clientsNamed(name)).length;

/** A run's final event, which ends its stream. */
const finished = (runId: string): RunEvent => {
  const result: RunResult = {
    runId,
    sessionId: "session",
    status: "completed",
    output: runId,
    error: null,
    agent: "agent",
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
  it("serves many concurrent readers, attached before and after the events, on one subscriber connection", async () => {
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
    // Every reader waits now: the run-store and queue connections and one shared subscriber,
    // not one per reader.
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

  it("keeps a run's last maxEventsPerRun events; a reader that fell behind goes on from the oldest kept", async () => {
    const backend = await startedBackend("hx-readers-trim", { maxEventsPerRun: 3 });
    await backend.publish("run-trim", toolStart("t1"));
    const behind = backend.events("run-trim")[Symbol.asyncIterator]();
    expect(await behind.next()).toEqual({ done: false, value: toolStart("t1") });
    for (const id of ["t2", "t3", "t4", "t5"]) await backend.publish("run-trim", toolStart(id));
    await backend.publish("run-trim", finished("run-trim"));

    const kept = [toolStart("t4"), toolStart("t5"), finished("run-trim")];
    expect(await collect(backend.events("run-trim"))).toEqual(kept);
    const rest: RunEvent[] = [];
    for (let next = await behind.next(); next.done !== true; next = await behind.next()) {
      rest.push(next.value);
    }
    expect(rest).toEqual(kept);
  });

  it("trims a parent's log as its children's stores tell their starts, at the positions a reader keeps", async () => {
    const backend = await startedBackend("hx-readers-trim-children", { maxEventsPerRun: 3 });
    await backend.createRun(storedRun("lead", { createdAt: 1 }));
    await backend.publish("lead", toolStart("t1"));
    const behind = backend.events("lead")[Symbol.asyncIterator]();
    expect(await behind.next()).toEqual({ done: false, value: toolStart("t1") });
    const calls = ["c0", "c1", "c2", "c3"];
    const children = calls.map((call) => ({
      ...storedRun(`lead.${call}`, { createdAt: 2, agent: "researcher" }),
      parentRunId: "lead",
      parentToolCallId: call,
      rootRunId: "lead",
    }));
    for (const each of children) {
      await backend.linkChild({
        runId: each.runId,
        agent: each.agent,
        parentRunId: "lead",
        parentToolCallId: each.parentToolCallId,
        parentIteration: 1,
        rootRunId: "lead",
        depth: 1,
        createdAt: 2,
      });
    }
    expect(await backend.submitRuns(children)).toEqual([]);
    await backend.publish("lead", finished("lead"));

    const told = (call: string): RunEvent => ({
      type: "child_started",
      childRunId: `lead.${call}`,
      agent: "researcher",
      toolCallId: call,
    });
    const kept = [told("c2"), told("c3"), finished("lead")];
    expect(await collect(backend.events("lead"))).toEqual(kept);
    const rest: RunEvent[] = [];
    for (let next = await behind.next(); next.done !== true; next = await behind.next()) {
      rest.push(next.value);
    }
    expect(rest).toEqual(kept);
    // Six appended in all (t1, four starts, the result): the positions count the trimmed ones.
    expect((await backend.readEvents("lead", 0, 10)).next).toBe(6);
  });

  it("makes up for wake-ups lost while its subscriber connection was down", async () => {
    const name = `hx-readers-kill-${Math.random().toString(36).slice(2)}`;
    const backend = await startedBackend(name);
    await backend.publish("run-kill", toolStart("before"));
    const reading = backend.events("run-kill")[Symbol.asyncIterator]();
    expect(await reading.next()).toEqual({ done: false, value: toolStart("before") });
    const waiting = reading.next();
    let subscriber: string | undefined;
    while (subscriber === undefined) {
      // The reader subscribes once it found nothing new: its connection has the P(ub/sub) flag.
      subscriber = (await clientsNamed(name)).find((line) => / flags=P /.test(line));
    }
    const id = /(?:^| )id=(\d+) /.exec(subscriber)?.[1];
    const admin = new Redis(redisUrl());
    clients.push(admin);
    expect(await admin.client("KILL", "ID", String(id))).toBe(1);
    // Published while nobody listens: its message is lost, the reconnection wakes the reader.
    await backend.publish("run-kill", toolStart("while down"));

    expect(await waiting).toEqual({ done: false, value: toolStart("while down") });
  });

  it("takes the events a wake-up carries, and reads the list when they leave a gap", async () => {
    const name = `hx-readers-carry-${Math.random().toString(36).slice(2)}`;
    const backend = await startedBackend(name);
    const events = `${prefixes.at(-1) ?? ""}:events:run-carry`;
    await backend.publish("run-carry", toolStart("first"));
    const reading = backend.events("run-carry")[Symbol.asyncIterator]();
    expect(await reading.next()).toEqual({ done: false, value: toolStart("first") });
    const waiting = reading.next();
    while (!(await clientsNamed(name)).some((line) => / flags=P /.test(line))) {
      // until the reader waits on its run's channel
    }
    const admin = new Redis(redisUrl());
    clients.push(admin);
    // Position 1 holds "listed"; the wake-up carries another event for it: the reader takes
    // the carried one, without reading the list.
    await admin.rpush(events, JSON.stringify(toolStart("listed")));
    await admin.publish(events, `1\n${JSON.stringify(toolStart("carried"))}`);
    expect(await waiting).toEqual({ done: false, value: toolStart("carried") });

    // A wake-up that starts past what the reader has (position 5 of 3): it reads the list.
    const next = reading.next();
    await admin.rpush(events, JSON.stringify(toolStart("read")));
    await admin.publish(events, `5\n${JSON.stringify(toolStart("skipped"))}`);
    expect(await next).toEqual({ done: false, value: toolStart("read") });

    await backend.publish("run-carry", finished("run-carry"));
    expect(await reading.next()).toEqual({ done: false, value: finished("run-carry") });
    expect(await reading.next()).toEqual({ done: true, value: undefined });
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
