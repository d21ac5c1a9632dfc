// Scheduling for many runs (SPEC §8), the same on every backend: bulk submits, priorities and
// delays kept by every job of a run, shared model rate limits, approval timeouts.
import { afterEach, describe, expect, it } from "vitest";
import type { EnqueueStepOptions } from "../../src/backend.js";
import {
  Agent,
  type AgentConfig,
  type AgentOptions,
  ApprovalError,
  BackendError,
  HookEvent,
  type Message,
  type Provider,
  ProviderError,
  type ProviderRequest,
  type ToolJob,
  UnknownAgentError,
} from "../../src/index.js";
import { textResponse } from "../../src/testing.js";
import { withOverrides } from "../support/backend-overrides.js";
import type { BackendFactory } from "./backend-contract.js";
import {
  approvalPolicy,
  collect,
  deleteTool,
  gate,
  oneToolModel,
  Runtimes,
  rejection,
  searchTool,
  silent,
} from "./fixtures.js";

const firstText = (messages: readonly Message[]): string => {
  const block = messages[0]?.content[0];
  return block?.type === "text" ? block.text : "";
};

/** A model that answers each run's input at once, and says which input it was asked, when. */
function echoModel(options: { before?: (request: ProviderRequest) => Promise<void> } = {}) {
  const calls: Array<{ input: string; at: number }> = [];
  const provider: Provider = {
    name: "echo",
    async complete(request) {
      await options.before?.(request);
      calls.push({ input: firstText(request.messages), at: Date.now() });
      return textResponse(`echo: ${firstText(request.messages)}`);
    },
  };
  return { provider, calls };
}

const agentWith = (config: AgentConfig, options: Omit<AgentOptions, "config" | "logger"> = {}) =>
  new Agent({ ...options, config, logger: silent });

/** The gaps between consecutive call times, ascending order of calls. */
const gapsOf = (times: readonly number[]): number[] => {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.slice(1).map((time, at) => time - (sorted[at] as number));
};

export function describeSchedulingContract(name: string, factory: BackendFactory): void {
  describe(`scheduling many runs on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    it("submitMany stores and queues every run in bulk; handles in the inputs' order", async () => {
      const model = echoModel();
      const runtime = await runtimes.start(
        [agentWith({ name: "echo" }, { provider: model.provider })],
        factory.create(),
      );
      const inputs = Array.from({ length: 40 }, (_, at) => `question ${at}`);

      const handles = await runtime.submitMany("echo", inputs, { sessionId: "batch" });
      const results = await Promise.all(handles.map((handle) => handle.result()));

      expect(results.map((result) => result.output)).toEqual(inputs.map((at) => `echo: ${at}`));
      expect(new Set(results.map((result) => result.runId)).size).toBe(inputs.length);
      expect(results.every((result) => result.sessionId === "batch")).toBe(true);
      const page = await runtime.list({ sessionId: "batch", limit: 100 });
      expect(page.runs.map((run) => run.runId).sort()).toEqual(
        handles.map((handle) => handle.runId).sort(),
      );
      expect(await runtime.submitMany("echo", [])).toEqual([]);
    });

    // More than one chunk of CREATE_RUNS (500 runs) on Redis, in flight together.
    it("submitMany of more runs than one bulk write: each run stored, indexed, announced and run", {
      timeout: 60_000,
    }, async () => {
      const count = 620;
      const inputs = Array.from({ length: count }, (_, at) => `bulk ${at}`);
      const backend = factory.create();
      const submitter = await runtimes.start([agentWith({ name: "echo" })], backend, {
        workers: false,
      });
      const stop = new AbortController();
      const announced = new Set<string>();
      const changes = await submitter.watch({ signal: stop.signal });
      const watching = (async () => {
        for await (const run of changes) {
          if (run.status === "queued") announced.add(run.runId);
          if (announced.size === count) return;
        }
      })();

      const handles = await submitter.submitMany("echo", inputs);
      const ids = handles.map((handle) => handle.runId);
      await watching;
      stop.abort();

      expect(new Set(ids).size).toBe(count);
      expect([...announced].sort()).toEqual([...ids].sort());
      const queued: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await submitter.list({ status: "queued", agent: "echo", limit: 500, cursor });
        queued.push(...page.runs.map((run) => run.runId));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(queued.sort()).toEqual([...ids].sort());
      expect((await submitter.get(ids[count - 1] as string)).messages).toEqual([
        { role: "user", content: [{ type: "text", text: `bulk ${count - 1}` }] },
      ]);
      // Only now a worker: every run's first step job was queued with its record.
      const model = echoModel();
      await runtimes.start([agentWith({ name: "echo" }, { provider: model.provider })], backend, {
        concurrency: 64,
      });
      const results = await Promise.all(handles.map((handle) => handle.result()));
      expect(results.map((result) => result.output)).toEqual(inputs.map((at) => `echo: ${at}`));
    });

    it("submitMany of a run id that exists refuses that one, stores the others and keeps the old", async () => {
      const model = echoModel();
      const ids = ["taken", "s-taken", "fresh-1", "s-1", "taken", "s-2", "fresh-2", "s-3"];
      const runtime = await runtimes.start(
        [agentWith({ name: "echo" }, { provider: model.provider })],
        factory.create(),
        { deps: { generateId: () => ids.shift() ?? "none" } },
      );
      const first = await runtime.submit("echo", "first");

      const error = await rejection(runtime.submitMany("echo", ["a", "b", "c"]));

      expect(error).toBeInstanceOf(BackendError);
      expect((error as Error).message).toMatch(/"taken"/);
      expect((error as Error).message).not.toMatch(/fresh/);
      expect((await first.result()).output).toBe("echo: first");
      const others = ["fresh-1", "fresh-2"].map((runId) => runtime.handle(runId).result());
      expect((await Promise.all(others)).map((result) => result.output)).toEqual([
        "echo: a",
        "echo: c",
      ]);
      expect(model.calls.map((call) => call.input).sort()).toEqual(["a", "c", "first"]);
    });

    it("refuses bad submit options, and submitMany of an unknown agent, writing nothing", async () => {
      const model = echoModel();
      const runtime = await runtimes.start(
        [agentWith({ name: "echo" }, { provider: model.provider })],
        factory.create(),
      );

      for (const options of [{ priority: 0 }, { priority: 1.5 }, { delayMs: -1 }]) {
        const error = await rejection(runtime.submit("echo", "x", options));
        expect((error as ApprovalError).code).toBe("config_invalid");
      }
      const unknown = await rejection(runtime.submitMany("nobody", ["x"]));
      expect(unknown).toBeInstanceOf(UnknownAgentError);
      expect((await runtime.list()).runs).toEqual([]);
    });

    it("takes queued runs by priority: none first, then 1, 2, 3", async () => {
      const hold = gate();
      const model = echoModel({
        before: async (request) => {
          if (firstText(request.messages) === "blocker") await hold.wait();
        },
      });
      const runtime = await runtimes.start(
        [agentWith({ name: "echo" }, { provider: model.provider })],
        factory.create(),
        { concurrency: { steps: 1, tools: 1 } },
      );
      const blocker = await runtime.submit("echo", "blocker");
      await hold.entered;

      const handles = [
        await runtime.submit("echo", "p3", { priority: 3 }),
        ...(await runtime.submitMany("echo", ["p1a", "p1b"], { priority: 1 })),
        await runtime.submit("echo", "none"),
        await runtime.submit("echo", "p2", { priority: 2 }),
      ];
      hold.open();
      await Promise.all([blocker, ...handles].map((handle) => handle.result()));

      expect(model.calls.map((call) => call.input)).toEqual([
        "blocker",
        "none",
        "p1a",
        "p1b",
        "p2",
        "p3",
      ]);
    });

    it("every later job of a run keeps its priority: tool jobs, steps after tools and approvals", async () => {
      const steps: EnqueueStepOptions[] = [];
      const tools: ToolJob[] = [];
      const backend = factory.create();
      const watched = withOverrides(backend, {
        async enqueueStep(runId, options = {}) {
          steps.push(options);
          await backend.enqueueStep(runId, options);
        },
        async enqueueTool(job) {
          tools.push(job);
          await backend.enqueueTool(job);
        },
        // The save that enters dispatch queues its tool jobs itself.
        async saveRun(runId, token, record, options) {
          tools.push(...(options?.thenTools ?? []));
          return backend.saveRun(runId, token, record, options);
        },
      });
      const deletions = deleteTool();
      const search = searchTool();
      const ops = agentWith(
        { name: "ops" },
        {
          provider: oneToolModel("delete_file", { field: "path" }),
          tools: [deletions.tool],
          permissions: approvalPolicy(),
        },
      );
      const support = agentWith(
        { name: "support" },
        { provider: oneToolModel("search"), tools: [search.tool] },
      );
      const runtime = await runtimes.start([ops, support], watched);

      const parked = await runtime.submit("ops", "/tmp/x", { priority: 7 });
      expect((await parked.result()).status).toBe("awaiting_approval");
      await runtime.approve(parked.runId, "call_1");
      const [searched] = await runtime.submitMany("support", ["harnessx"], { priority: 7 });
      const results = await Promise.all([parked.result(), searched?.result()]);

      expect(results.map((result) => result?.status)).toEqual(["completed", "completed"]);
      expect(tools.length).toBe(2);
      expect(tools.every((job) => job.priority === 7)).toBe(true);
      expect(steps.length).toBeGreaterThanOrEqual(3);
      expect(steps.every((options) => options.priority === 7)).toBe(true);
      expect((await runtime.get(parked.runId)).runId).toBe(parked.runId);
    });

    it("delayMs holds a run back: a run submitted after it without delay is served first", async () => {
      const model = echoModel();
      const runtime = await runtimes.start(
        [agentWith({ name: "echo" }, { provider: model.provider })],
        factory.create(),
      );

      const later = await runtime.submit("echo", "later", { delayMs: 400 });
      const now = await runtime.submit("echo", "now");
      await Promise.all([later.result(), now.result()]);

      expect(model.calls.map((call) => call.input)).toEqual(["now", "later"]);
    });

    it("a rate limit spaces a model's calls over the minute: 60 a minute is one a second", async () => {
      const model = echoModel();
      const limited = agentWith(
        { name: "limited", model: "m1", rateLimit: { requestsPerMinute: 60 } },
        { provider: model.provider },
      );
      // Another agent on the same provider name and model shares the limit.
      const sibling = agentWith(
        { name: "sibling", model: "m1", rateLimit: { requestsPerMinute: 60 } },
        { provider: model.provider },
      );
      const runtime = await runtimes.start([limited, sibling], factory.create());

      const handles = [
        ...(await runtime.submitMany("limited", ["a", "b"])),
        ...(await runtime.submitMany("sibling", ["c", "d"])),
      ];
      const results = await Promise.all(handles.map((handle) => handle.result()));

      expect(results.every((result) => result.status === "completed")).toBe(true);
      // The limiter's window is 1000 ms; the margin is only for reading the clock after each
      // admission's round trip (a call is never let through early, only noticed late).
      for (const gap of gapsOf(model.calls.map((call) => call.at))) {
        expect(gap).toBeGreaterThanOrEqual(950);
      }
    });

    it("rate_limited pauses the model, then the call is tried again and the run completes", async () => {
      let refusals = 0;
      const calls: number[] = [];
      let refusedAt = 0;
      const provider: Provider = {
        name: "busy",
        async complete(request) {
          calls.push(Date.now());
          if (refusals === 0) {
            refusals += 1;
            refusedAt = Date.now();
            throw new ProviderError("slow down", { code: "rate_limited", retryAfterMs: 1000 });
          }
          return textResponse(`done: ${firstText(request.messages)}`);
        },
      };
      const runtime = await runtimes.start(
        [agentWith({ name: "busy" }, { provider })],
        factory.create(),
      );

      const result = await (await runtime.submit("busy", "once")).result();

      expect(result.status).toBe("completed");
      expect(result.output).toBe("done: once");
      expect(calls.length).toBe(2);
      expect((calls[1] as number) - refusedAt).toBeGreaterThanOrEqual(1000);
    });

    it("a run whose first model call waits for its rate limit starts once: no start hook runs again", async () => {
      const started: string[] = [];
      const iterations: string[] = [];
      const listen = (agent: Agent): Agent => {
        agent.hooks.on(HookEvent.AGENT_START, ({ data }) => {
          started.push(data.runId);
        });
        agent.hooks.on(HookEvent.LOOP_ITERATION_START, ({ data }) => {
          iterations.push(`${data.runId}:${data.iteration}`);
        });
        return agent;
      };
      let refused = false;
      const refusingOnce: Provider = {
        name: "refusing-once",
        async complete(request) {
          if (!refused) {
            refused = true;
            throw new ProviderError("slow down", { code: "rate_limited", retryAfterMs: 100 });
          }
          return textResponse(`done: ${firstText(request.messages)}`);
        },
      };
      // 20 a minute: one call every 3 s, longer than a step waits in place, so the second run's
      // first step is deferred; the other agent's first call is refused with rate_limited.
      const runtime = await runtimes.start(
        [
          listen(
            agentWith(
              { name: "spaced", model: "m-spaced", rateLimit: { requestsPerMinute: 20 } },
              { provider: echoModel().provider },
            ),
          ),
          listen(agentWith({ name: "refused-once" }, { provider: refusingOnce })),
        ],
        factory.create(),
      );

      const handles = [
        ...(await runtime.submitMany("spaced", ["first", "second"])),
        await runtime.submit("refused-once", "third"),
      ];
      const results = await Promise.all(handles.map((handle) => handle.result()));

      expect(results.map((result) => result.output)).toEqual([
        "echo: first",
        "echo: second",
        "done: third",
      ]);
      const ids = handles.map((handle) => handle.runId);
      expect([...started].sort()).toEqual([...ids].sort());
      expect([...iterations].sort()).toEqual(ids.map((runId) => `${runId}:1`).sort());
    });

    it("fails the run with rate_limited once config.rateLimitWaitMs runs out", async () => {
      let attempts = 0;
      const provider: Provider = {
        name: "refusing",
        async complete() {
          attempts += 1;
          throw new ProviderError("no", { code: "rate_limited", retryAfterMs: 1000 });
        },
      };
      const runtime = await runtimes.start(
        [agentWith({ name: "refused", rateLimitWaitMs: 1500 }, { provider })],
        factory.create(),
      );

      const result = await (await runtime.submit("refused", "x")).result();

      expect(result.status).toBe("failed");
      expect(result.error?.code).toBe("rate_limited");
      expect(result.error?.message).toMatch(/rateLimitWaitMs \(1500 ms\)/);
      expect(attempts).toBe(2);
    });

    it("denies calls still undecided after approvalTimeoutMs, by harnessx; the run goes on", async () => {
      const deletions = deleteTool();
      const ops = agentWith(
        { name: "ops", approvalTimeoutMs: 300 },
        {
          provider: oneToolModel("delete_file", { field: "path" }),
          tools: [deletions.tool],
          permissions: approvalPolicy(),
        },
      );
      const runtime = await runtimes.start([ops], factory.create());

      const handle = await runtime.submit("ops", "/tmp/important");
      expect((await handle.result()).status).toBe("awaiting_approval");
      const events = await collect(handle.events());
      const final = events.at(-1);

      expect(final?.type === "result" && final.result.status).toBe("completed");
      expect(final?.type === "result" && final.result.output).toMatch(/approval timed out/);
      expect(deletions.deleted).toEqual([]);
      const { decisions } = await runtime.get(handle.runId);
      expect(decisions).toEqual([
        expect.objectContaining({
          toolCallId: "call_1",
          decision: "deny",
          reason: "approval timed out",
          by: "harnessx",
        }),
      ]);
      const late = await rejection(runtime.approve(handle.runId, "call_1", { by: "late" }));
      expect(late).toBeInstanceOf(ApprovalError);
      expect((late as ApprovalError).code).toBe("already_decided");
    });

    it("a decision in time stands; the timeout later changes nothing", async () => {
      const deletions = deleteTool();
      const ops = agentWith(
        { name: "ops", approvalTimeoutMs: 200 },
        {
          provider: oneToolModel("delete_file", { field: "path" }),
          tools: [deletions.tool],
          permissions: approvalPolicy(),
        },
      );
      const runtime = await runtimes.start([ops], factory.create());

      const handle = await runtime.submit("ops", "/tmp/x");
      expect((await handle.result()).status).toBe("awaiting_approval");
      await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
      const result = await handle.result();
      // Past the timeout: its job finds nothing undecided.
      await new Promise((resolve) => setTimeout(resolve, 400));

      expect(result.status).toBe("completed");
      expect(deletions.deleted).toEqual(["/tmp/x"]);
      const { decisions } = await runtime.get(handle.runId);
      expect(decisions.map((each) => [each.decision, each.by])).toEqual([["allow", "ops-lead"]]);
    });
  });
}
