// The remaining crash points of a tool job, with real worker processes on real Redis (see
// reliability.test.ts for the set-up): killed before the handler ran, a handler that outlives
// its job lock (frozen with SIGSTOP while another worker takes the job over), and a tool job
// whose worker dies on every attempt until BullMQ gives it up. Workers tell the test where they
// stopped on stdout; the test opens gates through Redis keys; nothing waits on time.

import { rm, writeFile } from "node:fs/promises";
import { Job, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { busyReleaseFile, gateKey } from "../fixtures/reliability-agents.js";
import { answer, SLOW_TEST_MS, useReliability } from "../fixtures/reliability-setup.js";
import { toolResults } from "../support/messages.js";
import { until } from "../support/until.js";

const { setUp, cleanups } = useReliability();

describe("a worker killed with SIGKILL before the handler ran", { timeout: SLOW_TEST_MS }, () => {
  it("a fresh worker completes every run; the handler runs at most once", async () => {
    const test = await setUp();
    const doomed = await test.worker("doomed", { block: true });
    // before-mark: the tool job is about to read its run and mark the call started. No mark
    // was written, so the fresh worker's delivery is the call's first start whatever the
    // tool's recovery: retry, fail and ask all run the handler, once.
    const beforeMark = ["retry_op j1 block:before-mark", "fail_op j2 block:before-mark"];
    beforeMark.push("ask_op j3 block:before-mark");
    // after-mark: the mark is written and the handler has not run. The fresh worker cannot
    // tell this from a crash inside the handler, so the tool's recovery decides: retry runs
    // the handler (its first run), fail commits an error result (the handler never runs),
    // ask parks the call for a person (it runs once approved).
    const [retryQuery, failQuery, askQuery] = [
      "retry_op k1 block:after-mark",
      "fail_op k2 block:after-mark",
      "ask_op k3 block:after-mark",
    ];
    const before = await Promise.all(
      beforeMark.map((query) => test.runtime.submit("reliable", query)),
    );
    const retry = await test.runtime.submit("reliable", retryQuery);
    const fail = await test.runtime.submit("reliable", failQuery);
    const ask = await test.runtime.submit("reliable", askQuery);
    await Promise.all([
      ...beforeMark.map((query) => doomed.blockedAt("before-mark", query)),
      ...[retryQuery, failQuery, askQuery].map((query) => doomed.blockedAt("after-mark", query)),
    ]);
    for (const query of [...beforeMark, retryQuery, failQuery, askQuery]) {
      expect(await test.count("handler", query)).toBe(0);
    }

    await doomed.kill();
    await test.worker("fresh");
    const beforeResults = await Promise.all(before.map((handle) => handle.result()));
    const [retried, failed, parked] = await Promise.all([
      retry.result(),
      fail.result(),
      ask.result(),
    ]);

    expect(beforeResults.map((result) => [result.status, result.output])).toEqual(
      beforeMark.map((query) => ["completed", answer(query)]),
    );
    for (const query of beforeMark) expect(await test.count("handler", query)).toBe(1);

    expect(retried.status).toBe("completed");
    expect(retried.output).toBe(answer(retryQuery));
    expect(await test.count("handler", retryQuery)).toBe(1);

    expect(failed.status).toBe("completed");
    expect(toolResults(failed.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content:
          "The tool call's outcome is unknown: its worker stopped answering while it ran (a crash, or an event loop blocked past lockDurationMs), so it may or may not have taken effect. It was not retried (recovery: fail).",
        isError: true,
      },
    ]);
    expect(await test.count("handler", failQuery)).toBe(0);

    expect(parked.status).toBe("awaiting_approval");
    expect(parked.pending.map((call) => [call.toolCallId, call.name])).toEqual([
      ["call_1", "ask_op"],
    ]);
    expect(parked.pending[0]?.reason).toMatch(
      /outcome is unknown: .* may or may not have taken effect \(recovery: ask\)/,
    );
    expect(await test.count("handler", askQuery)).toBe(0);
    await test.runtime.approve(ask.runId, "call_1", { by: "ops-lead" });
    const approved = await ask.result();
    expect(approved.status).toBe("completed");
    expect(approved.output).toBe(answer(askQuery));
    expect(await test.count("handler", askQuery)).toBe(1);
  });
});

describe("a handler that outlives its job lock", { timeout: SLOW_TEST_MS }, () => {
  it("runs twice under retry, and exactly one raw result is committed and applied", async () => {
    const test = await setUp();
    const frozen = await test.worker("frozen", { block: true });
    const query = "retry_op m1 pause:handler";
    const handle = await test.runtime.submit("reliable", query);
    await frozen.blockedAt("pause", query);
    // Frozen inside the handler: its lock is not renewed, BullMQ declares the job stalled and
    // the next worker takes it over and (retry) runs the handler again.
    frozen.freeze();
    const successor = await test.worker("successor");

    const result = await handle.result();
    const won = await successor.waitFor("its commit", (message) => message.event === "committed");
    expect(won).toMatchObject({ query: `${query} (by successor)`, won: true });
    expect(result.status).toBe("completed");
    expect(result.output).toBe(`${answer(query)} (by successor)`);

    // Thawed, the first handler finishes too; its commit is refused (first write wins).
    await test.counters.lpush(gateKey(test.prefix, query), "open");
    frozen.thaw();
    const lost = await frozen.waitFor("its commit", (message) => message.event === "committed");
    expect(lost).toMatchObject({ query: `${query} (by frozen)`, won: false });
    await frozen.stop(); // its tool job finishes: the step it queues goes to the successor
    const steps = test.queue("steps");
    await until("the steps queue to drain", async () => {
      const pending = await steps.getJobs(["wait", "delayed", "active", "prioritized"]);
      return pending.every((job) => (job.data as { runId?: string }).runId !== handle.runId);
    });

    expect(await test.count("handler", query)).toBe(2);
    expect(await test.backend.rawResults(handle.runId, 1)).toEqual({
      call_1: {
        toolCallId: "call_1",
        content: `done: ${query} (by successor)`,
        isError: false,
      },
    });
    const after = await handle.result();
    expect(after).toEqual(result);
    expect(toolResults(after.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content: `done: ${query} (by successor)`,
        isError: false,
      },
    ]);
    expect(await test.count("post", `${query} (by successor)`)).toBe(1);
    expect(await test.count("post", `${query} (by frozen)`)).toBe(0);
  });
});

describe("a handler that blocks its event loop past lockDurationMs", {
  timeout: SLOW_TEST_MS,
}, () => {
  it("is reported to the model as unknown, never as not run; its late result is logged as discarded", async () => {
    const test = await setUp();
    const stuck = await test.worker("stuck", { block: true });
    const query = "fail_op p1 busy:handler";
    const release = busyReleaseFile(test.prefix, query);
    cleanups.push(() => rm(release, { force: true }));
    const handle = await test.runtime.submit("reliable", query);
    await stuck.blockedAt("busy", query);
    // Its handler spins on the event loop: the job lock is not renewed, and the successor
    // takes the job over while the handler still runs (recovery: fail).
    await test.worker("successor");
    const result = await handle.result();

    expect(result.status).toBe("completed");
    const reported = toolResults(result.messages);
    expect(reported).toHaveLength(1);
    expect(reported[0]?.isError).toBe(true);
    expect(reported[0]?.content).toMatch(
      /^The tool call's outcome is unknown: .* it may or may not have taken effect\. It was not retried/,
    );
    expect(reported[0]?.content).not.toMatch(/interrupted|did not run/);
    expect(await test.count("handler", query)).toBe(1);

    // Released, the handler returns: its commit loses to the successor's and is logged.
    await writeFile(release, "");
    const late = await stuck.waitFor("its commit", (message) => message.event === "committed");
    expect(late).toMatchObject({ query: `${query} (by stuck)`, won: false });
    await stuck.logged("the discarded result", /a late tool result was discarded/);
    await stuck.logged("the event-loop lag", /the event loop was blocked/);
    expect(await handle.result()).toEqual(result);
  });
});

describe("a tool job whose worker dies on every attempt", { timeout: SLOW_TEST_MS }, () => {
  it("fails for good after maxStalledCount, and the run goes on with an error result", async () => {
    const test = await setUp();
    const query = "retry_op n1 crash:handler";
    const first = await test.worker("first", { maxStalledCount: 1 });
    const handle = await test.runtime.submit("reliable", query);
    expect(await first.exited()).toMatch(/signal SIGKILL/);
    // Delivered again (stalled once, within maxStalledCount 1): retry runs it, and it dies again.
    const second = await test.worker("second", { maxStalledCount: 1 });
    expect(await second.exited()).toMatch(/signal SIGKILL/);
    // Stalled twice: BullMQ fails the job when the next worker takes it, and that worker
    // commits an error result for the call and queues the run's next step.
    await test.worker("third", { maxStalledCount: 1 });
    const result = await handle.result();

    expect(result.status).toBe("completed");
    const error =
      "The tool call failed and will not be retried: job stalled more than allowable limit.";
    expect(toolResults(result.messages)).toEqual([
      { type: "tool_result", toolCallId: "call_1", content: error, isError: true },
    ]);
    expect(result.output).toBe(`Answer: ${error}`);
    expect(await test.count("handler", query)).toBe(2);
    const failed = await test.queue("tools").getJobs(["failed"]);
    expect(failed.map((job) => job.failedReason)).toEqual([
      "job stalled more than allowable limit",
    ]);
  });

  it("a step whose worker dies every time: the run fails with the reason after maxStalledCount", async () => {
    const test = await setUp();
    const query = "retry_op n3 crash:model";
    const first = await test.worker("first", { maxStalledCount: 1 });
    const handle = await test.runtime.submit("reliable", query);
    expect(await first.exited()).toMatch(/signal SIGKILL/);
    const second = await test.worker("second", { maxStalledCount: 1 });
    expect(await second.exited()).toMatch(/signal SIGKILL/);
    // Stalled twice: the third worker fails the step job for good and, once the dead worker's
    // lease on the run ran out, fails the run instead of running its model again.
    const third = await test.worker("third", { maxStalledCount: 1 });
    const result = await handle.result();

    expect(result.status).toBe("failed");
    expect(result.error).toEqual({
      name: "BackendError",
      code: "backend_failed",
      message:
        "The run's step failed for good and will not be retried: job stalled more than allowable limit.",
      // Nothing is saved before the first provider response: the run stands where it started.
      phase: "compose",
    });
    expect(await test.count("handler", query)).toBe(0);
    expect(third.running).toBe(true);
    const failed = await test.queue("steps").getJobs(["failed"]);
    expect(failed.map((job) => job.failedReason)).toEqual([
      "job stalled more than allowable limit",
    ]);
  });

  it("fails a malformed tool job without retry, and its worker keeps working", async () => {
    const test = await setUp();
    const worker = await test.worker("w1", { maxStalledCount: 1 });
    const connection = new Redis(test.url, { maxRetriesPerRequest: null });
    const events = new QueueEvents("harnessx-tools", { connection, prefix: test.prefix });
    cleanups.push(async () => {
      await events.close();
      connection.disconnect();
    });
    await events.waitUntilReady();
    const tools = test.queue("tools");

    const malformed = await tools.add("tool", { runId: 42 }, { jobId: "malformed", attempts: 3 });
    let failure: unknown;
    await malformed.waitUntilFinished(events).catch((error: unknown) => {
      failure = error;
    });

    expect(String(failure)).toMatch(/Malformed harnessx-tools job "malformed": runId/);
    const failed = await Job.fromId(tools, "malformed");
    expect(await failed?.getState()).toBe("failed");
    expect(failed?.attemptsMade).toBe(1);
    const query = "retry_op n2";
    const result = await (await test.runtime.submit("reliable", query)).result();
    expect(result.status).toBe("completed");
    expect(await test.count("handler", query)).toBe(1);
    expect(worker.running).toBe(true);
  });
});
