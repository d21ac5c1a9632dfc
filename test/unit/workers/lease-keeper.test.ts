import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { HeldToken } from "../../../src/store/leases.js";
import { LeaseKeeper } from "../../../src/workers/lease-keeper.js";
import { captureLogs } from "../../support/log-capture.js";

const LOCK_DURATION_MS = 1000;
const TICK_MS = LOCK_DURATION_MS / 4;

/** Leases whose renewal answers from `lost` (run ids no longer held), recording each call. */
function fakeLeases(lost = new Set<string>()) {
  const calls: HeldToken[][] = [];
  return {
    calls,
    lost,
    leases: {
      lockDurationMs: LOCK_DURATION_MS,
      renewLeases: async (held: readonly HeldToken[]) => {
        calls.push([...held]);
        return held.map(({ runId }) => !lost.has(runId));
      },
    },
  };
}

const lostWarnings = (lines: readonly string[]) =>
  lines
    .map((line) => JSON.parse(line) as { msg: string; runId?: string })
    .filter(({ msg }) => msg === "lost the run's lease while stepping")
    .map(({ runId }) => runId);

const running = { stopped: () => false };

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("LeaseKeeper", () => {
  it("renews every lease it keeps in one call a tick, and stops when none is kept", async () => {
    const { leases, calls } = fakeLeases();
    const keeper = new LeaseKeeper(leases, captureLogs().logger);
    const first = keeper.keep("a", 1, running);
    const second = keeper.keep("b", 7, running);
    await vi.advanceTimersByTimeAsync(TICK_MS);
    expect(calls).toEqual([
      [
        { runId: "a", token: 1 },
        { runId: "b", token: 7 },
      ],
    ]);
    first.stop({ released: true });
    await vi.advanceTimersByTimeAsync(TICK_MS);
    expect(calls.at(-1)).toEqual([{ runId: "b", token: 7 }]);
    second.stop();
    expect(keeper.size).toBe(0);
    await vi.advanceTimersByTimeAsync(4 * TICK_MS);
    expect(calls).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("reports a lease lost once, at its step's end, and renews it no more", async () => {
    const { leases, calls, lost } = fakeLeases();
    const logs = captureLogs();
    const keeper = new LeaseKeeper(leases, logs.logger);
    const kept = keeper.keep("a", 1, running);
    const other = keeper.keep("b", 2, running);
    lost.add("a");
    await vi.advanceTimersByTimeAsync(3 * TICK_MS);
    expect(calls.map((call) => call.map(({ runId }) => runId))).toEqual([["a", "b"], ["b"], ["b"]]);
    expect(lostWarnings(logs.lines)).toEqual([]);
    kept.stop();
    kept.stop();
    expect(lostWarnings(logs.lines)).toEqual(["a"]);
    other.stop();
  });

  it("says nothing of a lease its step's own save gave up while a renewal was out", async () => {
    const { leases, lost } = fakeLeases();
    const logs = captureLogs();
    const keeper = new LeaseKeeper(leases, logs.logger);
    const kept = keeper.keep("a", 1, running);
    // The releasing save ran in the store before the renewal; its reply is heard after.
    lost.add("a");
    await vi.advanceTimersByTimeAsync(TICK_MS);
    kept.stop({ released: true });
    expect(lostWarnings(logs.lines)).toEqual([]);
  });

  it("renews nothing once the process stopped renewing (its shutdown deadline passed)", async () => {
    const { leases, calls } = fakeLeases();
    let stopped = false;
    const keeper = new LeaseKeeper(leases, captureLogs().logger);
    const kept = keeper.keep("a", 1, { stopped: () => stopped });
    await vi.advanceTimersByTimeAsync(TICK_MS);
    stopped = true;
    await vi.advanceTimersByTimeAsync(3 * TICK_MS);
    expect(calls).toHaveLength(1);
    kept.stop();
  });

  it("logs a failed renewal and renews again at the next tick", async () => {
    const logs = captureLogs();
    let failures = 1;
    const calls: number[] = [];
    const keeper = new LeaseKeeper(
      {
        lockDurationMs: LOCK_DURATION_MS,
        renewLeases: async (held) => {
          calls.push(held.length);
          if (failures-- > 0) throw new Error("Redis did not answer");
          return held.map(() => true);
        },
      },
      logs.logger,
    );
    const kept = keeper.keep("a", 1, running);
    await vi.advanceTimersByTimeAsync(2 * TICK_MS);
    expect(calls).toEqual([1, 1]);
    const messages = logs.lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(["lease renewal failed"]);
    kept.stop();
    expect(lostWarnings(logs.lines)).toEqual([]);
  });
});
