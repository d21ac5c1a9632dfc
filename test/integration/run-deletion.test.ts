// Erasing data (#34 items 7 and 9a): runtime.delete(runId) and runtime.deleteSession(sessionId)
// through a real runtime, on memory and on a real Redis, where every key under the prefix is
// read back and searched for the session's canary.
import { Redis } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import {
  AgentRuntime,
  ConfigError,
  HarnessError,
  memoryBackend,
  RunActiveError,
  RunNotFoundError,
  type RunRecord,
  redisBackend,
} from "../../src/index.js";
import { ScriptedProvider, textResponse } from "../../src/testing.js";
import { captureLogs } from "../support/log-capture.js";
import { rejection } from "../support/rejection.js";
import { storedRun } from "../support/run-records.js";
import { makeAgent, Runtimes, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

const ERASED = "CANARY-ERASE-ME";

/** A queued run stored as submit stores it, but with no job: it stays unfinished. */
const queuedRun = (runId: string, sessionId: string, text: string): RunRecord => {
  const run = storedRun(runId, { createdAt: Date.now(), sessionId });
  return {
    ...run,
    input: { ...run.input, messages: [{ role: "user", content: [{ type: "text", text }] }] },
  };
};
const KEPT = "CANARY-STILL-GOING";

/** Every key under `prefix` with its whole value, as text to search. */
async function dumpPrefix(prefix: string): Promise<Map<string, string>> {
  const client = new Redis(redisUrl());
  const dump = new Map<string, string>();
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        const type = await client.type(key);
        const value =
          type === "string"
            ? await client.get(key)
            : type === "hash"
              ? await client.hgetall(key)
              : type === "list"
                ? await client.lrange(key, 0, -1)
                : type === "set"
                  ? await client.smembers(key)
                  : type === "zset"
                    ? await client.zrange(key, 0, -1)
                    : type === "stream"
                      ? await client.xrange(key, "-", "+")
                      : type;
        dump.set(key, `${key} ${JSON.stringify(value)}`);
      }
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
  return dump;
}

const prefixes: string[] = [];
const runtimes = new Runtimes();
afterEach(async () => {
  await runtimes.closeAll();
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
});

const backends: Array<{ name: string; create: () => { backend: RunBackend; prefix?: string } }> = [
  { name: "memoryBackend()", create: () => ({ backend: memoryBackend() }) },
  {
    name: "redisBackend()",
    create: () => {
      const prefix = uniquePrefix();
      prefixes.push(prefix);
      return { backend: redisBackend({ url: redisUrl(), prefix }), prefix };
    },
  },
];

beforeAll(async () => {
  await requireRedis();
});

describe.each(backends)("erasing runs and sessions on $name", ({ create }) => {
  const agent = () =>
    makeAgent("support", {
      // Echoes the request, so a run's canary is in the model's answer too.
      provider: new ScriptedProvider(
        [async (request) => textResponse(`noted: ${JSON.stringify(request.messages.at(-1))}`)],
        { loop: true },
      ),
    });

  it("deleteSession deletes the session's finished runs and saved state, keeps its unfinished runs and other sessions", async () => {
    const { backend, prefix } = create();
    const runtime = await runtimes.start([agent()], backend);
    const erased = await Promise.all(
      [1, 2].map((n) => runtime.submit("support", `${ERASED} ${n}`, { sessionId: "erase-me" })),
    );
    const other = await runtime.submit("support", "other session", { sessionId: "keep" });
    for (const handle of [...erased, other]) {
      expect((await handle.result()).status).toBe("completed");
    }
    const address = { agent: "support", extension: "memory", key: "notes", sessionId: "erase-me" };
    await backend.extensionState.set(address, { note: ERASED });
    await backend.extensionState.set({ ...address, key: "todo" }, [ERASED]);
    const keptAddress = { ...address, sessionId: "keep" };
    await backend.extensionState.set(keptAddress, { note: "kept" });
    // A run of the session that is not finished (stored with no job, so no worker takes it).
    const going = queuedRun("going", "erase-me", KEPT);
    expect(await backend.createRun(going)).toBe(true);
    if (prefix !== undefined) {
      const before = [...(await dumpPrefix(prefix)).values()].join("\n");
      expect(before).toContain(ERASED);
    }

    expect(await runtime.deleteSession("erase-me")).toEqual({ runs: 2, states: 2 });

    for (const handle of erased) {
      expect(await rejection(runtime.get(handle.runId))).toBeInstanceOf(RunNotFoundError);
    }
    expect((await runtime.list({ sessionId: "erase-me" })).runs.map((run) => run.runId)).toEqual([
      going.runId,
    ]);
    expect(await backend.extensionState.get(address)).toBeUndefined();
    expect(await backend.extensionState.get({ ...address, key: "todo" })).toBeUndefined();
    expect(await backend.extensionState.get(keptAddress)).toEqual({ note: "kept" });
    expect((await runtime.get(other.runId)).status).toBe("completed");
    if (prefix !== undefined) {
      const after = await dumpPrefix(prefix);
      const holding = [...after.entries()].filter(([, text]) => text.includes(ERASED));
      expect(holding.map(([key]) => key)).toEqual([]);
      expect([...after.values()].join("\n")).toContain(KEPT);
    }
    // Nothing left to erase: an empty answer, not an error.
    expect(await runtime.deleteSession("erase-me")).toEqual({ runs: 0, states: 0 });
  });

  it("delete removes one finished run, refuses a run still going and an unknown or empty id", async () => {
    const { backend } = create();
    const runtime = await runtimes.start([agent()], backend);
    const done = await runtime.submit("support", "finish me");
    expect((await done.result()).status).toBe("completed");
    const going = queuedRun("going", "any", "still queued");
    expect(await backend.createRun(going)).toBe(true);

    await runtime.delete(done.runId);
    expect(await rejection(runtime.get(done.runId))).toBeInstanceOf(RunNotFoundError);
    expect(await rejection(runtime.delete(done.runId))).toBeInstanceOf(RunNotFoundError);

    const active = await rejection(runtime.delete(going.runId));
    expect(active).toBeInstanceOf(RunActiveError);
    expect((active as HarnessError).code).toBe("run_active");
    expect((await runtime.get(going.runId)).status).toBe("queued");

    expect(await rejection(runtime.delete(""))).toBeInstanceOf(ConfigError);
    expect(await rejection(runtime.deleteSession(""))).toBeInstanceOf(ConfigError);
    const closed = new AgentRuntime({ agents: [], backend: memoryBackend(), logger: silent });
    expect(await rejection(closed.delete("x"))).toBeInstanceOf(HarnessError);
  });
});

describe("a corrupt summary on Redis, through the runtime", () => {
  it("prune reports it as unreadable and logs its id, call after call; delete removes it", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const logs = captureLogs("warn");
    const runtime = new AgentRuntime({
      agents: [
        makeAgent("support", {
          provider: new ScriptedProvider([textResponse("done")], { loop: true }),
        }),
      ],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger: logs.logger,
    });
    await runtime.start();
    try {
      const [good, bad] = await Promise.all([
        runtime.submit("support", "one"),
        runtime.submit("support", "two"),
      ]);
      if (good === undefined || bad === undefined) throw new Error("expected two runs");
      for (const handle of [good, bad]) expect((await handle.result()).status).toBe("completed");
      // A stray write: the summary is garbage.
      const client = new Redis(redisUrl());
      await client.hset(`${prefix}:run:${bad.runId}`, "summary", "{not json");
      client.disconnect();

      const finishedBefore = Date.now() + 60_000;
      expect(await runtime.prune({ finishedBefore })).toEqual({ deleted: 1, unreadable: 1 });
      expect(await runtime.prune({ finishedBefore })).toEqual({ deleted: 0, unreadable: 1 });
      const warned = await logs.waitFor((entry) => entry.runId === bad.runId);
      expect(String(warned.msg)).toContain("runtime.delete(runId)");

      await runtime.delete(bad.runId);
      expect(await runtime.prune({ finishedBefore })).toEqual({ deleted: 0, unreadable: 0 });
      expect(await rejection(runtime.get(bad.runId))).toBeInstanceOf(RunNotFoundError);
      expect((await runtime.list()).runs).toEqual([]);
    } finally {
      await runtime.close();
    }
  });
});
