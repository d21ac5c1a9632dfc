// A step's events travel with the fenced save that follows them: a refused save (lease lost)
// publishes none of them, an accepted one publishes them in order. Both backends.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import {
  LeaseLostError,
  memoryBackend,
  RUN_RECORD_VERSION,
  type RunEvent,
  type RunRecord,
  type RunResult,
  redisBackend,
} from "../../src/index.js";
import { collect, silent } from "./fixtures.js";
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

const factories: Record<string, () => RunBackend> = {
  "memoryBackend()": () => memoryBackend(),
  "redisBackend()": () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    return redisBackend({ url: redisUrl(), prefix, lockDurationMs: 2000 });
  },
};

const result: RunResult = {
  runId: "run",
  sessionId: "session-run",
  status: "completed",
  output: "done",
  error: null,
  agent: "agent",
  pending: [],
  usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
  iterations: 0,
  messages: [],
};

const record = (status: RunRecord["status"]): RunRecord => ({
  schemaVersion: RUN_RECORD_VERSION,
  runId: "run",
  sessionId: "session-run",
  agent: "support",
  status,
  phase: status === "completed" ? "done" : "compose",
  input: {
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    maxIterations: 5,
  },
  snapshot: null,
  result: status === "completed" ? result : null,
  createdAt: 1,
  updatedAt: 1,
});

const toolStart = (id: string): RunEvent => ({
  type: "tool_start",
  toolCall: { id, name: "search", input: {} },
});

describe.each(Object.entries(factories))("saveRun with events on %s", (_name, create) => {
  it("publishes the events of an accepted save, in order, and none of a refused one", async () => {
    const backend = create();
    started.push(backend);
    await backend.start({ concurrency: 1, logger: silent });
    await backend.createRun(record("queued"));
    const stale = await backend.acquireLease("run");
    if (!stale.acquired) throw new Error("expected the lease");
    await backend.releaseLease("run", stale.token);
    const current = await backend.acquireLease("run");
    if (!current.acquired) throw new Error("expected the lease");

    const refused = await backend
      .saveRun("run", stale.token, record("running"), { events: [toolStart("lost")] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(LeaseLostError);
    await backend.saveRun("run", current.token, record("running"), {
      events: [toolStart("first"), toolStart("second")],
    });
    await backend.saveRun("run", current.token, record("completed"), { events: [] });
    await backend.publish("run", { type: "result", result });

    expect(await collect(backend.events("run"))).toEqual([
      toolStart("first"),
      toolStart("second"),
      { type: "result", result },
    ]);
    expect((await backend.loadRun("run"))?.status).toBe("completed");
  });
});

// The Redis scripts push messages and events 1,000 arguments at a time (the Lua stack's bound
// on `unpack`): a conversation written anew and a save's events longer than that keep their
// order and are all stored.
const roomy: Record<string, () => RunBackend> = {
  "memoryBackend()": () => memoryBackend({ maxEventsPerRun: 5000 }),
  "redisBackend()": () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    return redisBackend({ url: redisUrl(), prefix, lockDurationMs: 2000, maxEventsPerRun: 5000 });
  },
};

describe.each(Object.entries(roomy))("saves of more than 1,000 entries on %s", (_name, create) => {
  it("stores 2,500 messages and appends 2,500 events of one save, in order", async () => {
    const backend = create();
    started.push(backend);
    await backend.start({ concurrency: 1, logger: silent });
    const messages = Array.from({ length: 2500 }, (_, at) => ({
      role: "user" as const,
      content: [{ type: "text" as const, text: `message ${at}` }],
    }));
    const withMessages = (status: RunRecord["status"]): RunRecord => {
      const base = record(status);
      return { ...base, input: { ...base.input, messages } };
    };
    await backend.createRun(withMessages("queued"));
    expect((await backend.loadRun("run"))?.input.messages).toEqual(messages);
    const lease = await backend.acquireLease("run");
    if (!lease.acquired) throw new Error("expected the lease");
    const events = Array.from({ length: 2500 }, (_, at) => toolStart(`call ${at}`));
    await backend.saveRun("run", lease.token, withMessages("running"), { events });
    await backend.saveRun("run", lease.token, withMessages("completed"), { events: [] });
    await backend.publish("run", { type: "result", result });

    expect(await collect(backend.events("run"))).toEqual([...events, { type: "result", result }]);
    expect((await backend.loadRun("run"))?.input.messages).toEqual(messages);
  });
});
