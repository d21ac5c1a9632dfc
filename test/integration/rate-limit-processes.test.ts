// A model's rate limit shared by two worker processes on real Redis (SPEC §8): the calls of
// both stay within it, and a `rate_limited` answer in one pauses the model in both. The test
// process only submits; the workers (test/fixtures/rate-limit-worker.ts) record each call.
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { Agent, AgentRuntime, redisBackend } from "../../src/index.js";
import { WorkerProcesses } from "../fixtures/worker-processes.js";
import { silent } from "./fixtures.js";
import { deletePrefix, redisUrl, uniquePrefix } from "./redis.js";

const SCRIPT = fileURLToPath(new URL("../fixtures/rate-limit-worker.ts", import.meta.url));

interface Call {
  at: number;
  pid: number;
  input: string;
  outcome: "ok" | "rate_limited";
}

const workers = new WorkerProcesses();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await workers.killAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp() {
  const url = redisUrl();
  const prefix = uniquePrefix();
  const notes = new Redis(url, { maxRetriesPerRequest: null });
  cleanups.push(async () => {
    notes.disconnect();
    await deletePrefix(prefix, url);
  });
  const [one, two] = await Promise.all(
    ["one", "two"].map((name) => workers.start({ url, prefix, name, script: SCRIPT })),
  );
  // The agent, to submit: a process that only submits needs it registered by name.
  const runtime = new AgentRuntime({
    agents: ["limited", "spaced"].map(
      (name) => new Agent({ config: { name, model: "m" }, logger: silent }),
    ),
    backend: redisBackend({ url, prefix }),
    logger: silent,
  });
  await runtime.start({ workers: false });
  cleanups.push(() => runtime.close());
  const calls = async (): Promise<Call[]> =>
    (await notes.lrange(`${prefix}:test:calls`, 0, -1)).map((json) => JSON.parse(json) as Call);
  return { runtime, calls, pids: [one?.pid, two?.pid] };
}

describe("a model's rate limit across two worker processes", { timeout: 60_000 }, () => {
  it("keeps the calls of both processes within 60 a minute: one a second, never two", async () => {
    const { runtime, calls, pids } = await setUp();

    const handles = await runtime.submitMany(
      "limited",
      Array.from({ length: 6 }, (_, at) => `run ${at}`),
    );
    const results = await Promise.all(handles.map((handle) => handle.result()));

    expect(results.every((result) => result.status === "completed")).toBe(true);
    const made = await calls();
    expect(made.length).toBe(6);
    expect(new Set(made.map((call) => call.pid))).toEqual(new Set(pids));
    const times = made.map((call) => call.at).sort((a, b) => a - b);
    // The limiter's window is 1000 ms; the margin is only for reading each process's clock
    // after its admission's round trip (a call is never let through early, only noticed late).
    for (let at = 1; at < times.length; at += 1) {
      expect((times[at] as number) - (times[at - 1] as number)).toBeGreaterThanOrEqual(950);
    }
  });

  it("spreads 300 a minute evenly over both processes: one call every 200 ms, no bursts", async () => {
    const { runtime, calls, pids } = await setUp();

    const handles = await runtime.submitMany(
      "spaced",
      Array.from({ length: 16 }, (_, at) => `run ${at}`),
    );
    const results = await Promise.all(handles.map((handle) => handle.result()));

    expect(results.every((result) => result.status === "completed")).toBe(true);
    const made = await calls();
    expect(made.length).toBe(16);
    expect(new Set(made.map((call) => call.pid))).toEqual(new Set(pids));
    const times = made.map((call) => call.at).sort((a, b) => a - b);
    // 5 a second in windows of one second: a window's requests taken at once would come
    // within a few ms of each other. Evenly spaced they are 200 ms apart; half that is the
    // margin for reading each process's clock after the call was let through.
    for (let at = 1; at < times.length; at += 1) {
      expect((times[at] as number) - (times[at - 1] as number)).toBeGreaterThanOrEqual(100);
    }
  });

  it("rate_limited in one process pauses the model in both, then every run completes", async () => {
    const { runtime, calls } = await setUp();

    const refused = await runtime.submit("limited", "refuse-once");
    // Once the refusal is recorded, more runs come: none may call the model during the pause.
    for (;;) {
      const made = await calls();
      if (made.some((call) => call.outcome === "rate_limited")) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const others = await runtime.submitMany("limited", ["after 1", "after 2", "after 3"]);
    const results = await Promise.all([refused, ...others].map((handle) => handle.result()));

    expect(results.map((result) => result.status)).toEqual(Array(4).fill("completed"));
    const made = await calls();
    const refusal = made.find((call) => call.outcome === "rate_limited");
    const later = made.filter((call) => call !== refusal);
    expect(later.length).toBe(4);
    expect(new Set(later.map((call) => call.outcome))).toEqual(new Set(["ok"]));
    // Paused for its retryAfterMs (2000 ms) in both processes; the margin is the clock reading
    // as above.
    for (const call of later) {
      expect(call.at - (refusal?.at ?? 0)).toBeGreaterThanOrEqual(1950);
    }
  });
});
