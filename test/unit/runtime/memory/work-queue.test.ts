import { describe, expect, it, vi } from "vitest";
import { MemoryWorkQueue } from "../../../../src/runtime/memory/work-queue.js";
import { gate } from "../../../support/gate.js";

/** Resolves when `condition` holds, re-checked after every job the probe sees finish. */
function probe() {
  const waiters: Array<() => void> = [];
  return {
    changed() {
      for (const wake of waiters.splice(0)) wake();
    },
    async until(condition: () => boolean): Promise<void> {
      while (!condition()) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

describe("MemoryWorkQueue", () => {
  it("never runs more jobs at once than its concurrency", async () => {
    const queue = new MemoryWorkQueue<number>();
    const release = gate();
    const watch = probe();
    let running = 0;
    let maxRunning = 0;
    let started = 0;
    const done: number[] = [];
    for (let job = 0; job < 7; job += 1) queue.add(job);
    queue.work(
      async (job) => {
        running += 1;
        started += 1;
        maxRunning = Math.max(maxRunning, running);
        watch.changed();
        await release.opened;
        running -= 1;
        done.push(job);
        watch.changed();
      },
      3,
      () => {},
    );

    await watch.until(() => started === 3);
    expect(queue.active).toBe(3);
    release.open();
    await watch.until(() => done.length === 7);

    expect(maxRunning).toBe(3);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it("ignores a keyed job while one with the key waits or runs, and takes it again after", async () => {
    const queue = new MemoryWorkQueue<string>();
    const watch = probe();
    const seen: string[] = [];
    const release = gate();
    queue.work(
      async (job) => {
        seen.push(job);
        watch.changed();
        if (job === "first") await release.opened;
      },
      4,
      () => {},
    );

    queue.add("first", { key: "call-1" });
    queue.add("duplicate", { key: "call-1" });
    await watch.until(() => seen.length === 1);
    queue.add("while running", { key: "call-1" });
    release.open();
    await queue.close(1000);

    expect(seen).toEqual(["first"]);
    const reopened = new MemoryWorkQueue<string>();
    const again: string[] = [];
    reopened.work(
      async (job) => {
        again.push(job);
        watch.changed();
      },
      1,
      () => {},
    );
    reopened.add("one", { key: "k" });
    await watch.until(() => again.length === 1);
    await watch.until(() => reopened.active === 0);
    reopened.add("two", { key: "k" });
    await watch.until(() => again.length === 2);
    expect(again).toEqual(["one", "two"]);
  });

  it("reports a failing job and carries on with the next", async () => {
    const queue = new MemoryWorkQueue<string>();
    const watch = probe();
    const failures: Array<[string, unknown]> = [];
    const done: string[] = [];
    queue.work(
      async (job) => {
        if (job === "bad") throw new Error("boom");
        done.push(job);
        watch.changed();
      },
      1,
      (job, error) => {
        failures.push([job, error]);
        watch.changed();
      },
    );

    queue.add("bad");
    queue.add("good");
    await watch.until(() => done.length === 1);

    expect(done).toEqual(["good"]);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.[0]).toBe("bad");
    expect(String(failures[0]?.[1])).toContain("boom");
  });

  it("close() waits for running jobs, drops waiting ones and refuses new ones", async () => {
    const queue = new MemoryWorkQueue<string>();
    const release = gate();
    const watch = probe();
    const finished: string[] = [];
    queue.work(
      async (job) => {
        watch.changed();
        await release.opened;
        finished.push(job);
      },
      1,
      () => {},
    );
    queue.add("running");
    queue.add("waiting");
    await watch.until(() => queue.active === 1);

    const closing = queue.close(5000);
    queue.add("late");
    release.open();

    expect(await closing).toBe(true);
    expect(finished).toEqual(["running"]);
  });

  it("close() gives up at its deadline when a job never ends", async () => {
    const queue = new MemoryWorkQueue<string>();
    const watch = probe();
    queue.work(
      async () => {
        watch.changed();
        await new Promise<void>(() => {});
      },
      1,
      () => {},
    );
    queue.add("stuck");
    await watch.until(() => queue.active === 1);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const closing = queue.close(30_000);
      await vi.advanceTimersByTimeAsync(30_000);
      expect(await closing).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
