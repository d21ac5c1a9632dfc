// Bounded retention of finished runs: their working data expires, their record and event log
// stay. Run
// against both backends with a tiny retention; the Redis expiries are also checked key by key.
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import {
  type ApprovalError,
  memoryBackend,
  RUN_RECORD_VERSION,
  type RunResult,
  redisBackend,
} from "../../src/index.js";
import { withOverrides } from "../support/backend-overrides.js";
import { until } from "../support/until.js";
import {
  approvalAgent,
  collect,
  collectUntil,
  Runtimes,
  rejection,
  silent,
  withoutDeltas,
} from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const runtimes = new Runtimes();
const prefixes: string[] = [];
const clients: Redis[] = [];
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  await runtimes.closeAll();
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
  for (const client of clients.splice(0)) client.disconnect();
});

function redisOn(prefix: string, retentionMs: number): RunBackend {
  return redisBackend({
    url: redisUrl(),
    prefix,
    retentionMs,
    lockDurationMs: 2000,
    stalledIntervalMs: 1000,
  });
}

const backends: Record<string, (retentionMs: number) => RunBackend> = {
  "memoryBackend()": (retentionMs) => memoryBackend({ retentionMs }),
  "redisBackend()": (retentionMs) => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    return redisOn(prefix, retentionMs);
  },
};

for (const [name, create] of Object.entries(backends)) {
  describe(`retention of finished runs on ${name}`, () => {
    it("drops a finished run's working data after retentionMs; its record, result and events stay", async () => {
      const { agent, deleted } = approvalAgent();
      const backend = create(50);
      const runtime = await runtimes.start([agent], backend);
      const handle = await runtime.submit("ops", "old.log");
      expect((await handle.result()).status).toBe("awaiting_approval");
      await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
      const result = await handle.result();
      expect(result.status).toBe("completed");
      expect(deleted).toEqual(["old.log"]);

      await until("the finished run's data to expire", async () => {
        const raw = await backend.rawResults(handle.runId, 1);
        const decisions = await backend.decisions(handle.runId, 1);
        return Object.keys(raw).length === 0 && Object.keys(decisions).length === 0;
      });

      // The timeline stays readable for as long as the record.
      const timeline = await collect(runtime.handle(handle.runId).events());
      expect(withoutDeltas(timeline).map((event) => event.type)).toEqual([
        "approval_required",
        "tool_start",
        "tool_end",
        "result",
      ]);
      expect(timeline.at(-1)).toEqual({ type: "result", result });
      expect(await runtime.handle(handle.runId).result()).toEqual(result);
      expect((await handle.record()).status).toBe("completed");
      expect((await runtime.list({ status: "completed" })).runs.map((run) => run.runId)).toEqual([
        handle.runId,
      ]);
      // The audit trail is the record's, not working data: it outlives the retention.
      expect((await runtime.get(handle.runId)).decisions).toEqual([
        {
          toolCallId: "call_1",
          name: "delete_file",
          decision: "allow",
          reason: null,
          by: "ops-lead",
          inputHash: expect.stringMatching(/^[0-9a-f]{64}$/),
          at: expect.any(Number),
        },
      ]);
      const error = await rejection(runtime.approve(handle.runId, "call_1"));
      expect((error as ApprovalError).code).toBe("already_decided");
    });

    it("keeps a parked run's data however long it waits", async () => {
      const { agent } = approvalAgent();
      const backend = create(50);
      const runtime = await runtimes.start([agent], backend);
      const parkedHandle = await runtime.submit("ops", "keep.log");
      const parked = await parkedHandle.result();
      expect(parked.status).toBe("awaiting_approval");
      // A second run finishes: its retention runs out while the first one stays parked.
      const cancelled = await runtime.submit("ops", "drop.log");
      expect((await cancelled.result()).status).toBe("awaiting_approval");
      await runtime.cancel(cancelled.runId);
      expect((await cancelled.result()).status).toBe("cancelled");
      await until("the cancelled run's working data to expire", async () => {
        return !(await backend.cancelRequested(cancelled.runId));
      });

      const events = await collectUntil(parkedHandle.events(), "approval_required");
      expect(events.at(-1)).toEqual({ type: "approval_required", pending: parked.pending });
      expect(await runtime.handle(parkedHandle.runId).result()).toEqual(parked);
      await runtime.approve(parkedHandle.runId, "call_1");
      expect((await parkedHandle.result()).status).toBe("completed");
    });
  });
}

describe("retention on redisBackend(), key by key", () => {
  /** Every key of the run under `prefix` (not BullMQ's), with its PTTL. */
  async function runKeys(prefix: string, runId: string): Promise<Record<string, number>> {
    const redis = new Redis(redisUrl());
    clients.push(redis);
    const found: Record<string, number> = {};
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*${runId}*`, "COUNT", 500);
      cursor = next;
      for (const key of keys) {
        if (
          key.startsWith(`${prefix}:harnessx-steps:`) ||
          key.startsWith(`${prefix}:harnessx-tools:`)
        ) {
          continue;
        }
        found[key.slice(prefix.length + 1).replace(runId, "<run>")] = await redis.pttl(key);
      }
    } while (cursor !== "0");
    return found;
  }

  it("sets the retention expiry on every working key of a finished run, none on its record or events", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const { agent } = approvalAgent();
    const runtime = await runtimes.start([agent], redisOn(prefix, 60_000));
    const handle = await runtime.submit("ops", "old.log");
    expect((await handle.result()).status).toBe("awaiting_approval");

    const parked = await runKeys(prefix, handle.runId);
    expect(Object.keys(parked).sort()).toEqual([
      "ckpt:<run>",
      "events:<run>",
      "msgs:<run>",
      "run:<run>",
    ]);
    expect(Object.values(parked)).toEqual([-1, -1, -1, -1]);

    await runtime.approve(handle.runId, "call_1");
    expect((await handle.result()).status).toBe("completed");
    const finished = await runKeys(prefix, handle.runId);
    const { "lease:<run>": lease, ...kept } = finished;

    expect(Object.keys(kept).sort()).toEqual([
      "audit:<run>",
      "ckpt:<run>",
      "decisions:<run>:1",
      "events:<run>",
      "inflight:<run>:1",
      "msgs:<run>",
      "raw:<run>:1",
      "run:<run>",
    ]);
    const history = ["run:<run>", "msgs:<run>", "ckpt:<run>", "events:<run>", "audit:<run>"];
    for (const key of history) expect({ key, ttl: kept[key] }).toEqual({ key, ttl: -1 });
    for (const [key, ttl] of Object.entries(kept)) {
      if (history.includes(key)) continue;
      expect({ key, expires: ttl > 0 && ttl <= 60_000 }).toEqual({ key, expires: true });
    }
    // The lease, if the last step has not released it yet, expires on its own.
    if (lease !== undefined) expect(lease).toBeGreaterThan(0);
  });

  it("prune deletes every key of a finished run and its index entries", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const { agent } = approvalAgent();
    const runtime = await runtimes.start([agent], redisOn(prefix, 60_000));
    const handle = await runtime.submit("ops", "old.log", { sessionId: "s-1" });
    expect((await handle.result()).status).toBe("awaiting_approval");
    await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
    expect((await handle.result()).status).toBe("completed");
    const parked = await runtime.submit("ops", "keep.log", { sessionId: "s-1" });
    expect((await parked.result()).status).toBe("awaiting_approval");
    await until("the finished run's lease to be released", async () => {
      return !("lease:<run>" in (await runKeys(prefix, handle.runId)));
    });

    expect(await runtime.prune({ finishedBefore: Date.now() + 1 })).toEqual({
      deleted: 1,
      unreadable: 0,
    });

    expect(await runKeys(prefix, handle.runId)).toEqual({});
    const redis = new Redis(redisUrl());
    clients.push(redis);
    // Every run index is a sorted set of run ids; the overview's per-bucket counters (hashes of
    // counts, kept as history) name no run.
    const indexKeys = await redis.keys(`${prefix}:idx:*`);
    const types = await Promise.all(indexKeys.map((key) => redis.type(key)));
    const indexes = indexKeys.filter((_key, at) => types[at] === "zset");
    expect(indexes.length).toBeGreaterThan(0);
    expect(types.filter((type) => type !== "zset" && type !== "hash")).toEqual([]);
    for (const index of indexes) {
      expect({ index, score: await redis.zscore(index, handle.runId) }).toEqual({
        index,
        score: null,
      });
    }
    expect((await runtime.list()).runs.map((run) => run.runId)).toEqual([parked.runId]);
  });

  it("a reader whose stream expires while it waits ends with the run's final result", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const backend = redisOn(prefix, 60_000);
    await backend.start({ concurrency: 1, logger: silent });
    cleanups.push(() => backend.close({ timeoutMs: 1000 }));
    const result: RunResult = {
      runId: "run-x",
      sessionId: "session-x",
      status: "completed",
      output: "done",
      error: null,
      agent: "agent",
      pending: [],
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      iterations: 1,
      messages: [],
    };
    const call = { id: "call_1", name: "search", input: {} };
    await backend.publish("run-x", { type: "tool_start", toolCall: call });
    const reading = backend.events("run-x")[Symbol.asyncIterator]();
    expect(await reading.next()).toEqual({
      done: false,
      value: { type: "tool_start", toolCall: call },
    });
    // The run finished, and its stream expired before the reader saw the final result.
    await backend.createRun({
      schemaVersion: RUN_RECORD_VERSION,
      runId: "run-x",
      sessionId: "session-x",
      agent: "support",
      status: "completed",
      phase: "done",
      input: {
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        maxIterations: 3,
      },
      snapshot: null,
      result,
      createdAt: 1,
      updatedAt: 2,
    });
    const redis = new Redis(redisUrl());
    clients.push(redis);
    expect(await redis.del(`${prefix}:events:run-x`)).toBe(1);

    expect(await reading.next()).toEqual({ done: false, value: { type: "result", result } });
    expect(await reading.next()).toEqual({ done: true, value: undefined });
  });

  it("a stray step after the keys expired leaves no key behind for good", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const { agent } = approvalAgent();
    const released = releases(redisOn(prefix, 50));
    const runtime = await runtimes.start([agent], released.backend);
    const handle = await runtime.submit("ops", "old.log");
    await handle.result();
    await runtime.cancel(handle.runId);
    expect((await handle.result()).status).toBe("cancelled");
    await until("the cancelled run's keys to expire", async () => {
      const keys = await runKeys(prefix, handle.runId);
      return Object.keys(keys).sort().join() === "ckpt:<run>,events:<run>,msgs:<run>,run:<run>";
    });

    const stray = released.next(handle.runId);
    await released.backend.enqueueStep(handle.runId);
    await stray;

    // Its fencing token comes from the run's hash, which stays with the record.
    const left = await runKeys(prefix, handle.runId);
    const { "lease:<run>": lease, ...kept } = left;
    expect(kept).toEqual({
      "ckpt:<run>": -1,
      "events:<run>": -1,
      "msgs:<run>": -1,
      "run:<run>": -1,
    });
    if (lease !== undefined) expect(lease).toBeGreaterThan(0);
  });
});

/** Wraps a backend to tell when a run's lease is released next. */
function releases(backend: RunBackend) {
  const waiting = new Map<string, () => void>();
  const wrapped = withOverrides(backend, {
    async releaseLease(runId, token) {
      const outcome = await backend.releaseLease(runId, token);
      waiting.get(runId)?.();
      waiting.delete(runId);
      return outcome;
    },
  });
  return {
    backend: wrapped,
    next: (runId: string) =>
      new Promise<void>((resolve) => {
        waiting.set(runId, resolve);
      }),
  };
}
