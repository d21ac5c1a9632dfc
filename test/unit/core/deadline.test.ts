import { describe, expect, it } from "vitest";
import { systemTimer, withDeadline } from "../../../src/core/deadline.js";
import type { Timer } from "../../../src/index.js";

/** A timer that fires only when the test says so, and counts what is scheduled and cancelled. */
function manualTimer() {
  const scheduled: Array<{ callback: () => void; ms: number; cancelled: boolean }> = [];
  const timer: Timer = {
    schedule(callback, ms) {
      const entry = { callback, ms, cancelled: false };
      scheduled.push(entry);
      return () => {
        entry.cancelled = true;
      };
    },
  };
  const fire = () => {
    for (const entry of scheduled) if (!entry.cancelled) entry.callback();
  };
  return { timer, scheduled, fire };
}

const never = <T>(): Promise<T> => new Promise<T>(() => {});

describe("withDeadline", () => {
  it("returns the work's value and cancels its timer", async () => {
    const { timer, scheduled } = manualTimer();
    const outcome = await withDeadline(async () => "done", {
      ms: 50,
      signal: new AbortController().signal,
      timer,
      reason: () => new Error("late"),
    });
    expect(outcome).toEqual({ expired: false, value: "done" });
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0]?.ms).toBe(50);
    expect(scheduled[0]?.cancelled).toBe(true);
  });

  it("stops waiting for work that ignores its signal, and aborts the signal with the reason", async () => {
    const { timer, fire } = manualTimer();
    let seen: AbortSignal | undefined;
    const pending = withDeadline(
      (signal) => {
        seen = signal;
        return never<string>();
      },
      { ms: 50, signal: new AbortController().signal, timer, reason: () => new Error("late") },
    );
    fire();
    expect(await pending).toEqual({ expired: true });
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as Error | undefined)?.message).toBe("late");
  });

  it("drops a rejection that comes after the deadline", async () => {
    const { timer, fire } = manualTimer();
    let reject: (error: Error) => void = () => {};
    const pending = withDeadline(
      () =>
        new Promise<string>((_resolve, rejectWork) => {
          reject = rejectWork;
        }),
      { ms: 5, signal: new AbortController().signal, timer, reason: () => new Error("late") },
    );
    fire();
    expect(await pending).toEqual({ expired: true });
    reject(new Error("too late to matter"));
    // An unhandled rejection would fail the test run.
    await new Promise((resolve) => setImmediate(resolve));
  });

  it("passes the caller's abort on to the work", async () => {
    const { timer } = manualTimer();
    const caller = new AbortController();
    const pending = withDeadline(
      (signal) =>
        new Promise<string>((_resolve, reject) => {
          signal.addEventListener("abort", () => reject(new Error("aborted by the caller")));
        }),
      { ms: 50, signal: caller.signal, timer, reason: () => new Error("late") },
    );
    caller.abort();
    await expect(pending).rejects.toThrow("aborted by the caller");
  });

  it("stops waiting for work that ignores the caller's abort, and cancels its timer", async () => {
    const { timer, scheduled } = manualTimer();
    const caller = new AbortController();
    const pending = withDeadline(() => never<string>(), {
      ms: 600_000,
      signal: caller.signal,
      timer,
      reason: () => new Error("late"),
    });
    caller.abort(new Error("the run was cancelled"));
    await expect(pending).rejects.toThrow("the run was cancelled");
    expect(scheduled.map((entry) => entry.cancelled)).toEqual([true]);
  });

  it("rethrows what the work throws before the deadline, synchronously or not", async () => {
    const { timer, scheduled } = manualTimer();
    const options = {
      ms: 50,
      signal: new AbortController().signal,
      timer,
      reason: () => new Error("late"),
    };
    await expect(
      withDeadline(() => {
        throw new Error("at once");
      }, options),
    ).rejects.toThrow("at once");
    await expect(
      withDeadline(async () => {
        throw new Error("later");
      }, options),
    ).rejects.toThrow("later");
    expect(scheduled.every((entry) => entry.cancelled)).toBe(true);
  });

  it("times out with the system timer", async () => {
    const outcome = await withDeadline(() => never<string>(), {
      ms: 10,
      signal: new AbortController().signal,
      timer: systemTimer,
      reason: () => new Error("late"),
    });
    expect(outcome).toEqual({ expired: true });
  });
});
