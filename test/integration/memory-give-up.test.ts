// Jobs that throw on the embedded backend: it does not retry them, it gives them up at once,
// as a Redis job is given up once its attempts ran out, so that no run waits for them forever.
// The failures are injected into the backend (a store write that throws), not into the engine.
import { afterEach, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import { HookEvent, memoryBackend, type RunRecord } from "../../src/index.js";
import { withOverrides } from "../support/backend-overrides.js";
import {
  approvalAgent,
  leaseCounters,
  makeAgent,
  observeLeases,
  oneToolModel,
  Runtimes,
  searchTool,
} from "./fixtures.js";

const runtimes = new Runtimes();

afterEach(async () => {
  await runtimes.closeAll();
});

/** A backend whose `method` throws `message` the first `times` calls that `when` accepts. */
function failing<K extends keyof RunBackend>(
  backend: RunBackend,
  method: K,
  message: string,
  options: { times?: number; when?: (...args: unknown[]) => boolean } = {},
): RunBackend {
  let left = options.times ?? 1;
  const original = (backend[method] as (...args: unknown[]) => Promise<unknown>).bind(backend);
  const replacement = (...args: unknown[]) => {
    if (left > 0 && (options.when?.(...args) ?? true)) {
      left -= 1;
      return Promise.reject(new Error(message));
    }
    return original(...args);
  };
  return withOverrides(backend, { [method]: replacement } as Partial<RunBackend>);
}

describe("memoryBackend(): a job that throws is given up", () => {
  it("a step: the run fails with the reason, AGENT_END and a final result event", async () => {
    const search = searchTool();
    const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });
    const ended: string[] = [];
    agent.hooks.on(HookEvent.AGENT_END, (ctx) => {
      ended.push(ctx.data.result.status);
    });
    // The save at dispatch fails once: the step job throws. (The save after the provider
    // response is not waited for: the step learns of its failure only at its end.)
    const backend = failing(memoryBackend(), "saveRun", "disk on fire", {
      when: (_runId, _token, record) => (record as RunRecord).phase === "dispatch",
    });
    const runtime = await runtimes.start([agent], backend);

    const handle = await runtime.submit("support", "cats");
    const result = await handle.result();

    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({
      name: "BackendError",
      message: "The run's step failed for good and will not be retried: disk on fire.",
      // The provider response was saved before: the run stands there.
      phase: "afterLlm",
    });
    expect(search.total).toBe(0);
    expect(ended).toEqual(["failed"]);
    const events = [];
    for await (const event of handle.events()) events.push(event);
    expect(events.at(-1)).toEqual({ type: "result", result });
    expect((await runtime.list({ status: "failed" })).runs.map((run) => run.runId)).toEqual([
      result.runId,
    ]);
  });

  it("a tool job: its call gets an error result and the run completes", async () => {
    const search = searchTool();
    const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });
    const backend = failing(memoryBackend(), "openToolCall", "marker store down");
    const runtime = await runtimes.start([agent], backend);

    const result = await (await runtime.submit("support", "cats")).result();

    const error = "The tool call failed and will not be retried: marker store down.";
    expect(result.status).toBe("completed");
    expect(result.output).toBe(`Answer: ${error}`);
    expect(search.total).toBe(0);
  });

  it("a step given up after its dispatch save, its tool job never queued: the give-up queues it", async () => {
    const search = searchTool();
    const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });
    const store = memoryBackend();
    // The dispatch save is applied without the tool job it queues, and the step fails: as a
    // worker killed right after the save's write on Redis, where the job's add is another
    // command. The give-up finds the run at dispatch with a call nothing runs.
    let lost = 0;
    const backend = withOverrides(store, {
      async saveRun(runId, token, record, options = {}) {
        if (lost > 0 || options.thenTools === undefined) {
          return store.saveRun(runId, token, record, options);
        }
        lost += 1;
        const { thenTools: _lost, ...saved } = options;
        await store.saveRun(runId, token, record, saved);
        throw new Error("the worker died after the save");
      },
    });
    const runtime = await runtimes.start([agent], backend);

    const result = await (await runtime.submit("support", "cats")).result();

    expect(lost).toBe(1);
    expect(result.status).toBe("completed");
    expect(result.output).toBe("Answer: Results for cats");
    expect(search.total).toBe(1);
  });

  it("a give-up finding the run at dispatch with every result committed fails it there", async () => {
    const search = searchTool();
    const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });
    const store = memoryBackend();
    // The step the tool job queues with its commit is lost (as with its worker, every time):
    // the run stands at dispatch with its result committed, and nothing else steps it.
    let dropStep = (): void => {};
    const dropped = new Promise<void>((resolve) => {
      dropStep = resolve;
    });
    let dropping = true;
    const backend = withOverrides(store, {
      async enqueueStep(runId, options) {
        if (dropping && search.total > 0) {
          dropping = false;
          dropStep();
          return;
        }
        await store.enqueueStep(runId, options);
      },
    });
    const runtime = await runtimes.start([agent], backend);
    const handle = await runtime.submit("support", "cats");
    await dropped;
    const stuck = await handle.record();
    expect([stuck.status, stuck.phase]).toEqual(["running", "dispatch"]);

    await store.enqueueStep(handle.runId, { giveUp: "an earlier step crashed" });
    const result = await handle.result();

    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({
      name: "BackendError",
      message: "The run's step failed for good and will not be retried: an earlier step crashed.",
      phase: "dispatch",
    });
    expect(search.total).toBe(1);
  });

  it("a give-up step leaves a parked run parked: approving it still completes it", async () => {
    const { agent, deleted } = approvalAgent();
    const counters = leaseCounters();
    const store = memoryBackend();
    const { backend } = observeLeases(store, counters);
    const runtime = await runtimes.start([agent], backend);
    const handle = await runtime.submit("ops", "old.log");
    const parked = await handle.result();
    expect(parked.status).toBe("awaiting_approval");
    await counters.waitForReleases(parked.runId, 1);

    await store.enqueueStep(parked.runId, { giveUp: "an earlier step crashed" });
    await counters.waitForReleases(parked.runId, 2);

    expect((await runtime.handle(parked.runId).result()).status).toBe("awaiting_approval");
    await runtime.approve(parked.runId, "call_1");
    const finished = await handle.result();
    expect(finished.status).toBe("completed");
    expect(deleted).toEqual(["old.log"]);
  });
});
