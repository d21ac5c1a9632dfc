// What AgentRuntime reads of runs as they change, on every backend: the feed of run summaries
// (`watch`) and a run's event log by position (`events`, `followEvents`).
import { afterEach, describe, expect, it } from "vitest";
import { type RunEvent, RunNotFoundError, type RunSummary } from "../../src/index.js";
import type { BackendFactory } from "./backend-contract.js";
import {
  approvalAgent,
  collect,
  makeAgent,
  oneToolModel,
  Runtimes,
  rejection,
  searchTool,
} from "./fixtures.js";

export function describeRunFeedsContract(name: string, factory: BackendFactory): void {
  describe(`run feeds on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    it("watch: tells each run's summary as it is created, parks, is decided and completes", async () => {
      const { agent } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());
      const stop = new AbortController();
      const changes = await runtime.watch({ signal: stop.signal });

      const handle = await runtime.submit("ops", "old.log");
      const seen: RunSummary[] = [];
      const iterator = changes[Symbol.asyncIterator]();
      const statuses = async (until: RunSummary["status"]): Promise<void> => {
        for (;;) {
          const next = await iterator.next();
          if (next.done) throw new Error(`the feed ended before ${until}`);
          if (next.value.runId !== handle.runId) continue;
          seen.push(next.value);
          if (next.value.status === until) return;
        }
      };
      await statuses("awaiting_approval");
      const parked = seen.at(-1);
      expect(parked?.pending.map((call) => call.name)).toEqual(["delete_file"]);
      await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
      await statuses("completed");
      stop.abort();
      expect((await iterator.next()).done).toBe(true);

      const order = seen.map((summary) => summary.status).filter((s, i, all) => s !== all[i - 1]);
      expect(order[0]).toBe("queued");
      expect(order).toContain("awaiting_approval");
      expect(order.indexOf("awaiting_approval")).toBeLessThan(order.indexOf("completed"));
      expect(seen.at(-1)).toEqual(
        (await runtime.list({ status: "completed" })).runs.find((r) => r.runId === handle.runId),
      );
    });

    it("watch: ends when its signal aborts; another watcher keeps hearing", async () => {
      const { agent } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());
      const first = new AbortController();
      const second = new AbortController();
      const stopped = await runtime.watch({ signal: first.signal });
      const kept = await runtime.watch({ signal: second.signal });
      first.abort();
      expect(await collect(stopped)).toEqual([]);

      const handle = await runtime.submit("ops", "a.log");
      const iterator = kept[Symbol.asyncIterator]();
      const next = await iterator.next();
      expect(next.done).toBe(false);
      expect(next.value?.runId).toBe(handle.runId);
      second.abort();
      await iterator.return?.();
    });

    it("events: a page of the log by position, then nothing new; followEvents resumes there", async () => {
      const search = searchTool();
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
      });
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("support", "cats");
      const everything = await collect(handle.events());

      const whole = await runtime.events(handle.runId);
      expect(whole.events).toEqual(everything);
      expect(whole.next).toBe(everything.length);
      expect(await runtime.events(handle.runId, { after: whole.next })).toEqual({
        events: [],
        next: whole.next,
      });
      const firstTwo = await runtime.events(handle.runId, { limit: 2 });
      expect(firstTwo).toEqual({ events: everything.slice(0, 2), next: 2 });

      const rest: Array<{ position: number; event: RunEvent }> = await collect(
        await runtime.followEvents(handle.runId, { after: 2 }),
      );
      expect(rest.map((numbered) => numbered.position)).toEqual(
        everything.slice(2).map((_, index) => index + 2),
      );
      expect(rest.map((numbered) => numbered.event)).toEqual(everything.slice(2));
    });

    it("followEvents: follows a parked run live until its result", async () => {
      const { agent } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("ops", "old.log");
      await handle.result();
      const { next } = await runtime.events(handle.runId);
      const following = collect(await runtime.followEvents(handle.runId, { after: next }));
      await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
      const live = await following;
      expect(live[0]?.position).toBe(next);
      expect(live.at(-1)?.event.type).toBe("result");
      expect(live.map((numbered) => numbered.event.type)).toContain("tool_end");
    });

    it("events and followEvents refuse an unknown run", async () => {
      const runtime = await runtimes.start([approvalAgent().agent], factory.create());
      expect(await rejection(runtime.events("nope"))).toBeInstanceOf(RunNotFoundError);
      expect(await rejection(runtime.followEvents("nope"))).toBeInstanceOf(RunNotFoundError);
    });
  });
}
