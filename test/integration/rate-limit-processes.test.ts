// A model's rate limit shared by two worker processes on real Redis (SPEC §8): the calls of
// both stay within it, and a `rate_limited` answer in one pauses the model in both. The test
// process only submits; the workers (test/fixtures/rate-limit-worker.ts) record each call, and
// each place their shared limiter grants. Spacing is judged on the grants, not on when each
// call then ran: a loaded host runs a call late (its timer fires late), which says nothing
// about the limiter.
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { Agent, AgentRuntime, redisBackend } from "../../src/index.js";
import type { Grant } from "../fixtures/rate-limit-worker.js";
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

/**
 * The most grants certainly within less than `spanMs` of each other: each grant is known to lie
 * in [askedAt + waitMs, answeredAt + waitMs] (`Grant`), so a set of them is certainly within
 * a span when its latest bound minus its earliest is below it. An admission's round trips
 * widen its bounds; they never make a spacing the limiter kept look broken.
 */
function mostWithin(grants: readonly Grant[], spanMs: number): number {
  const bounds = grants.map((grant) => ({
    from: grant.askedAt + grant.waitMs,
    to: grant.answeredAt + grant.waitMs,
  }));
  return Math.max(
    0,
    ...bounds.map(
      (first) =>
        bounds.filter((other) => other.from >= first.from && other.to - first.from < spanMs).length,
    ),
  );
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
  const grants = async (model: string): Promise<Grant[]> =>
    (await notes.lrange(`${prefix}:test:grants`, 0, -1))
      .map((json) => JSON.parse(json) as Grant)
      .filter((grant) => grant.key === `shared:${model}`);
  return { runtime, calls, grants, pids: [one?.pid, two?.pid] };
}

describe("a model's rate limit across two worker processes", { timeout: 60_000 }, () => {
  it("keeps the calls of both processes within 60 a minute: one a second, never two", async () => {
    const { runtime, calls, grants, pids } = await setUp();

    const handles = await runtime.submitMany(
      "limited",
      Array.from({ length: 6 }, (_, at) => `run ${at}`),
    );
    const results = await Promise.all(handles.map((handle) => handle.result()));

    expect(results.every((result) => result.status === "completed")).toBe(true);
    const made = await calls();
    expect(made.length).toBe(6);
    expect(new Set(made.map((call) => call.pid))).toEqual(new Set(pids));
    // One place a call, none of them within a second of another: a window of 1000 ms holds
    // one request, and the next window opens when it expired.
    const granted = await grants("m");
    expect(granted).toHaveLength(6);
    expect(new Set(granted.map((grant) => grant.pid))).toEqual(new Set(pids));
    expect(mostWithin(granted, 1000)).toBeLessThanOrEqual(1);
  });

  it("spreads 300 a minute evenly over both processes: one call every 200 ms, no bursts", async () => {
    const { runtime, calls, grants, pids } = await setUp();

    const handles = await runtime.submitMany(
      "spaced",
      Array.from({ length: 16 }, (_, at) => `run ${at}`),
    );
    const results = await Promise.all(handles.map((handle) => handle.result()));

    expect(results.every((result) => result.status === "completed")).toBe(true);
    const made = await calls();
    expect(made.length).toBe(16);
    expect(new Set(made.map((call) => call.pid))).toEqual(new Set(pids));
    const granted = await grants("m-spaced");
    expect(granted).toHaveLength(16);
    expect(new Set(granted.map((grant) => grant.pid))).toEqual(new Set(pids));
    // Places 200 ms apart; a request that finds its place gone by goes at once, less than one
    // place late. So a sliding second holds at most 5 + 1 grants (SPEC §8: "after a lull a
    // sliding second may hold one call more than the per-second rate")...
    expect(mostWithin(granted, 1000)).toBeLessThanOrEqual(6);
    // ...and no 100 ms holds three: a window's five places taken at once would be within a
    // few ms of each other.
    expect(mostWithin(granted, 100)).toBeLessThanOrEqual(2);
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
