// Crash recovery with real worker processes on real Redis. Workers run in child processes
// (test/fixtures/worker-process.ts) with short locks (1.5 s lock, 0.5 s stalled check); a worker
// told to block stops for good at a point its run names, tells the test, and is killed there
// with SIGKILL. A fresh worker process then recovers the run. Handlers and result middleware
// count their executions in Redis. The test process itself only submits and decides.
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import type { RunHandle, RunResult } from "../../src/index.js";
import { startPersistentRedis } from "../fixtures/redis-process.js";
import { counterKey } from "../fixtures/reliability-agents.js";
import { answer, SLOW_TEST_MS, useReliability } from "../fixtures/reliability-setup.js";
import { toolResults } from "../support/messages.js";
import { until } from "../support/until.js";

const { setUp, cleanups } = useReliability();

/**
 * After a crash behind the saved provider response: a fresh worker completes the run, with the
 * model asked once for the tool call (saved, not asked again) and once for the answer, and the
 * handler run once.
 */
async function completesWithoutAskingAgain(
  test: Awaited<ReturnType<typeof setUp>>,
  handle: RunHandle,
  query: string,
): Promise<void> {
  await test.worker("fresh");
  const result = await handle.result();

  expect(result.status).toBe("completed");
  expect(result.output).toBe(answer(query));
  expect(await test.count("model", query)).toBe(2);
  expect(await test.count("handler", query)).toBe(1);
}

describe("a worker killed with SIGKILL, recovered by a fresh worker process", {
  timeout: SLOW_TEST_MS,
}, () => {
  it("inside the handler: retry runs it again, fail gives an error result, ask parks", async () => {
    const test = await setUp();
    const doomed = await test.worker("doomed", { block: true });
    const retryQuery = "retry_op a1 block:handler";
    const failQuery = "fail_op a2 block:handler";
    const askQuery = "ask_op a3 block:handler";
    const retry = await test.runtime.submit("reliable", retryQuery);
    const fail = await test.runtime.submit("reliable", failQuery);
    const ask = await test.runtime.submit("reliable", askQuery);
    await Promise.all(
      [retryQuery, failQuery, askQuery].map((query) => doomed.blockedAt("handler", query)),
    );

    await doomed.kill();
    await test.worker("fresh");
    const [retried, failed, parked] = await Promise.all([
      retry.result(),
      fail.result(),
      ask.result(),
    ]);

    expect(retried.status).toBe("completed");
    expect(retried.output).toBe(answer(retryQuery));
    expect(await test.count("handler", retryQuery)).toBe(2);

    expect(failed.status).toBe("completed");
    expect(await test.count("handler", failQuery)).toBe(1);
    expect(toolResults(failed.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content:
          "The tool call's outcome is unknown: its worker stopped answering while it ran (a crash, or an event loop blocked past lockDurationMs), so it may or may not have taken effect. It was not retried (recovery: fail).",
        isError: true,
      },
    ]);

    expect(parked.status).toBe("awaiting_approval");
    expect(parked.pending).toEqual([
      {
        toolCallId: "call_1",
        name: "ask_op",
        input: { query: askQuery },
        reason: expect.stringMatching(
          /outcome is unknown: .* may or may not have taken effect \(recovery: ask\)/,
        ) as string,
      },
    ]);
    expect(await test.count("handler", askQuery)).toBe(1);

    await test.runtime.approve(ask.runId, "call_1", { by: "ops-lead" });
    const approved = await ask.result();

    expect(approved.status).toBe("completed");
    expect(approved.output).toBe(answer(askQuery));
    expect(await test.count("handler", askQuery)).toBe(2);
  });

  it("after the provider response is saved: response middleware runs again, the model is not asked again", async () => {
    const test = await setUp();
    const doomed = await test.worker("doomed", { block: true });
    const query = "retry_op a1 block:after-llm";
    const handle = await test.runtime.submit("reliable", query);
    await doomed.blockedAt("after-llm", query);
    // The save is sent before response middleware runs, and nothing waits for its reply.
    await until(
      "the provider response saved",
      async () => (await handle.record()).phase === "afterLlm",
    );
    expect(await test.count("model", query)).toBe(1);

    await doomed.kill();
    await completesWithoutAskingAgain(test, handle, query);
  });

  it("killed by response middleware at once: the response had left the process, the model is not asked again", async () => {
    const test = await setUp();
    const doomed = await test.worker("doomed", { block: true });
    const query = "retry_op a4 crash:after-llm";
    const handle = await test.runtime.submit("reliable", query);
    // The middleware kills the worker in the turn its save was issued in: had the save waited
    // for the turn's end to leave, it would have died with the process.
    expect(await doomed.exited()).toMatch(/signal SIGKILL/);
    expect((await handle.record()).phase).toBe("afterLlm");

    await completesWithoutAskingAgain(test, handle, query);
  });

  it("after the raw result is committed: post-processing runs, the handler does not run again", async () => {
    const test = await setUp();
    const doomed = await test.worker("doomed", { block: true });
    const query = "retry_op b1 block:after-commit";
    const handle = await test.runtime.submit("reliable", query);
    await doomed.blockedAt("after-commit", query);
    expect((await handle.record()).phase).toBe("dispatch");
    expect(await test.count("post", query)).toBe(0);

    await doomed.kill();
    await test.worker("fresh");
    const result = await handle.result();

    expect(result.status).toBe("completed");
    expect(result.output).toBe(answer(query));
    expect(await test.count("handler", query)).toBe(1);
    expect(await test.count("post", query)).toBe(1);
  });

  it("midway through post-processing: post-processing runs again, the handler does not", async () => {
    const test = await setUp();
    const doomed = await test.worker("doomed", { block: true });
    const query = "retry_op c1 block:post-processing";
    const handle = await test.runtime.submit("reliable", query);
    await doomed.blockedAt("post-processing", query);
    // The last save was at dispatch: post-processing is middleware, run again after a crash.
    expect((await handle.record()).phase).toBe("dispatch");

    await doomed.kill();
    await test.worker("fresh");
    const result = await handle.result();

    expect(result.status).toBe("completed");
    expect(result.output).toBe(answer(query));
    expect(await test.count("handler", query)).toBe(1);
    expect(await test.count("post", query)).toBe(2);
  });
});

interface Client {
  id: string;
  name: string;
}

async function clients(redis: Redis, prefix: string): Promise<Client[]> {
  const list = String(await redis.client("LIST"));
  return list
    .split("\n")
    .map((line) =>
      Object.fromEntries(
        line.split(" ").map((field) => {
          const at = field.indexOf("=");
          return [field.slice(0, at), field.slice(at + 1)];
        }),
      ),
    )
    .map((fields: Record<string, string | undefined>) => ({
      id: fields.id ?? "",
      name: fields.name ?? "",
    }))
    .filter((client) => client.name.startsWith(prefix));
}

describe("a worker process's connections", { timeout: SLOW_TEST_MS }, () => {
  it("reconnect after CLIENT KILL and keep consuming", async () => {
    const test = await setUp();
    await test.worker("w1");
    const warm = await test.runtime.submit("reliable", "retry_op d0");
    expect((await warm.result()).status).toBe("completed");

    const killed = await clients(test.counters, test.prefix);
    // Its run-store, queue, worker and cancel-subscriber connections, its counter connection,
    // and BullMQ's blocking connection per queue (steps, tools and the reconciler's).
    expect(killed.map((client) => client.name).sort()).toEqual(
      [
        `${test.prefix}-w1`,
        `${test.prefix}-w1`,
        `${test.prefix}-w1`,
        `${test.prefix}-w1`,
        `${test.prefix}-w1-counters`,
        `${test.prefix}:${Buffer.from("harnessx-steps").toString("base64")}:w:w1`,
        `${test.prefix}:${Buffer.from("harnessx-tools").toString("base64")}:w:w1`,
        `${test.prefix}:${Buffer.from("harnessx-maintenance").toString("base64")}:w:w1`,
      ].sort(),
    );
    for (const client of killed) {
      expect(await test.counters.client("KILL", "ID", client.id)).toBe(1);
    }

    const queries = ["retry_op d1", "retry_op d2", "retry_op d3"];
    const handles = await Promise.all(
      queries.map((query) => test.runtime.submit("reliable", query)),
    );
    const results = await Promise.all(handles.map((handle) => handle.result()));

    expect(results.map((result) => result.status)).toEqual(["completed", "completed", "completed"]);
    for (const query of queries) expect(await test.count("handler", query)).toBe(1);
    const reconnected = await clients(test.counters, test.prefix);
    expect(reconnected.map((client) => client.name).sort()).toEqual(
      killed.map((client) => client.name).sort(),
    );
    const killedIds = new Set(killed.map((client) => client.id));
    expect(reconnected.filter((client) => killedIds.has(client.id))).toEqual([]);
  });
});

describe("many runs across worker processes", { timeout: SLOW_TEST_MS }, () => {
  it("completes 200 concurrent runs on two worker processes, each handler exactly once", async () => {
    const test = await setUp();
    await Promise.all([test.worker("w1"), test.worker("w2")]);
    const queries = Array.from({ length: 200 }, (_, index) => `retry_op e${index}`);

    const handles = await Promise.all(
      queries.map((query) => test.runtime.submit("reliable", query)),
    );
    const results: RunResult[] = [];
    for (const handle of handles) results.push(await handle.result());

    expect(results.filter((result) => result.status !== "completed")).toEqual([]);
    expect(results.map((result) => result.output)).toEqual(queries.map(answer));
    const handlerCounts = await test.counters.mget(
      queries.map((query) => counterKey(test.prefix, "handler", query)),
    );
    const postCounts = await test.counters.mget(
      queries.map((query) => counterKey(test.prefix, "post", query)),
    );
    expect(handlerCounts).toEqual(queries.map(() => "1"));
    expect(postCounts).toEqual(queries.map(() => "1"));
  });

  it("stops a runaway model at maxIterations, and no job of the run is left in the queues", async () => {
    const test = await setUp();
    const worker = await test.worker("w1");
    const query = "retry_op f1";
    const handle = await test.runtime.submit("runaway", query);

    const result = await handle.result();
    await worker.stop(); // its active jobs finish first: whatever they queue stays queued

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("MaxIterationsError");
    expect(result.iterations).toBe(3);
    expect(await test.count("handler", query)).toBe(3);
    const left: string[] = [];
    const toolJobs: string[] = [];
    for (const name of ["harnessx-steps", "harnessx-tools"]) {
      const queue = new Queue(name, { connection: test.counters, prefix: test.prefix });
      cleanups.push(() => queue.close());
      const pending = await queue.getJobs([
        "wait",
        "delayed",
        "active",
        "prioritized",
        "waiting-children",
        "failed",
      ]);
      left.push(
        ...pending
          .filter((job) => job.data?.runId === handle.runId)
          .map((job) => `${name} ${job.id}`),
      );
      if (name === "harnessx-tools") {
        const completed = await queue.getJobs(["completed"]);
        toolJobs.push(
          ...completed
            .filter((job) => job.data?.runId === handle.runId)
            .map((job) => String(job.id)),
        );
      }
    }
    expect(left).toEqual([]);
    expect(toolJobs).toHaveLength(3);
  });
});

describe("a Redis restart with append-only persistence", { timeout: SLOW_TEST_MS }, () => {
  it("keeps every run and parked approval; the running worker resumes without a restart", async () => {
    const server = await startPersistentRedis();
    cleanups.push(() => server.remove()); // last: after the runtime and the workers are gone
    const test = await setUp(server.url);
    const worker = await test.worker("w1");
    const parkedHandle = await test.runtime.submit("reliable", "approve_op g1");
    const doneHandle = await test.runtime.submit("reliable", "retry_op g2");
    const parked = await parkedHandle.result();
    const done = await doneHandle.result();
    expect(parked.status).toBe("awaiting_approval");
    expect(done.status).toBe("completed");

    await server.restart();

    expect(await test.runtime.handle(done.runId).result()).toEqual(done);
    expect(await test.runtime.handle(parked.runId).result()).toEqual(parked);
    const waiting = await test.runtime.list({ status: "awaiting_approval" });
    expect(waiting.runs.map((run) => run.runId)).toEqual([parked.runId]);
    await test.runtime.approve(parked.runId, "call_1", { by: "ops-lead" });
    const approved = await parkedHandle.result();

    expect(approved.status).toBe("completed");
    expect(approved.output).toBe(answer("approve_op g1"));
    expect(await test.count("handler", "approve_op g1")).toBe(1);
    expect(await test.count("handler", "retry_op g2")).toBe(1);
    expect(worker.running).toBe(true);
    const after = await test.runtime.submit("reliable", "retry_op g3");
    expect((await after.result()).status).toBe("completed");
  });
});
