import { describe, expect, it } from "vitest";
import { type DeadlineScope, systemTimer, withDeadline } from "../../../src/core/deadline.js";
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
      ({ signal }) => {
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
      ({ signal }) =>
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

  it("gives work that reads its signal late one already aborted, with the deadline's reason", async () => {
    const { timer, fire } = manualTimer();
    let scope: DeadlineScope | undefined;
    const pending = withDeadline(
      (given) => {
        scope = given;
        return never<string>();
      },
      { ms: 50, signal: new AbortController().signal, timer, reason: () => new Error("late") },
    );
    fire();
    expect(await pending).toEqual({ expired: true });
    expect(scope?.signal.aborted).toBe(true);
    expect((scope?.signal.reason as Error | undefined)?.message).toBe("late");
  });

  it("gives work that reads its signal after the caller's abort one aborted with the caller's reason", async () => {
    const { timer } = manualTimer();
    const caller = new AbortController();
    let scope: DeadlineScope | undefined;
    const pending = withDeadline(
      (given) => {
        scope = given;
        return never<string>();
      },
      { ms: 50, signal: caller.signal, timer, reason: () => new Error("late") },
    );
    caller.abort(new Error("cancelled"));
    await expect(pending).rejects.toThrow("cancelled");
    expect(scope?.signal.aborted).toBe(true);
    expect((scope?.signal.reason as Error | undefined)?.message).toBe("cancelled");
  });

  it("hands work a signal already aborted when the caller's is", async () => {
    const { timer } = manualTimer();
    const caller = new AbortController();
    caller.abort(new Error("before it began"));
    let aborted: boolean | undefined;
    const pending = withDeadline(
      async ({ signal }) => {
        aborted = signal.aborted;
        return "ignored the abort";
      },
      { ms: 50, signal: caller.signal, timer, reason: () => new Error("late") },
    );
    // Work that settles at once keeps its own outcome, as with a later abort.
    expect(await pending).toEqual({ expired: false, value: "ignored the abort" });
    expect(aborted).toBe(true);
  });

  it("keeps the work's signal following the caller's after the call, read during it or after", async () => {
    const { timer } = manualTimer();
    const caller = new AbortController();
    const options = { ms: 50, signal: caller.signal, timer, reason: () => new Error("late") };
    let readDuring: AbortSignal | undefined;
    await withDeadline(async (scope) => {
      readDuring = scope.signal;
      return "done";
    }, options);
    let kept: DeadlineScope | undefined;
    await withDeadline(async (scope) => {
      kept = scope;
      return "done";
    }, options);
    const readAfter = kept?.signal;
    expect([readDuring?.aborted, readAfter?.aborted]).toEqual([false, false]);
    caller.abort(new Error("cancelled later"));
    expect([readDuring?.aborted, readAfter?.aborted]).toEqual([true, true]);
    expect((readAfter?.reason as Error | undefined)?.message).toBe("cancelled later");
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
