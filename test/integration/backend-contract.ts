// The behaviour every RunBackend gives AgentRuntime, run against memoryBackend() and
// redisBackend() alike (see memory-backend.test.ts and redis-backend.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ApprovalError,
  type DecisionRecord,
  HarnessError,
  HookEvent,
  LeaseLostError,
  type Message,
  Middleware,
  PermissionManager,
  type RecoveryPolicy,
  type RunBackend,
  type RunEvent,
  RunNotFoundError,
  type RunQuery,
  type RunRecord,
  type RunResult,
  tool,
  UnknownAgentError,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { toolResults } from "../support/messages.js";
import { storedRun } from "../support/run-records.js";
import {
  approvalAgent,
  approvalPolicy,
  collect,
  collectUntil,
  deferred,
  deleteTool,
  gate,
  makeAgent,
  observeLeases,
  oneToolModel,
  Runtimes,
  rejection,
  searchTool,
  silent,
  withoutDeltas,
} from "./fixtures.js";
import { describeHardeningContract } from "./hardening-contract.js";
import { describeRunExtrasContract } from "./run-extras-contract.js";
import { describeRunFeedsContract } from "./run-feeds-contract.js";
import { describeRunStoreContract } from "./run-store-contract.js";
import { describeSchedulingContract } from "./scheduling-contract.js";
import { describeTimelineContract } from "./timeline-contract.js";
import { describeTimeoutsContract } from "./timeouts-contract.js";

export interface BackendFactory {
  /** A started-fresh backend on storage no other test uses. */
  create(): RunBackend;
  /** Deletes what the test's backends stored. */
  cleanup(): Promise<void>;
  /** False where a run's appends and saves take connections of their own (a cluster). */
  publishesInOrder?: boolean;
  /**
   * Rewrites a stored field of a run (of the last backend created), as a stray write, a bad
   * restore or an intruder would: only storage that can be edited from outside has it.
   */
  editStored?(
    runId: string,
    field: "record" | "summary",
    edit: (json: string) => string,
  ): Promise<void>;
}

export function describeBackendContract(name: string, factory: BackendFactory): void {
  describePrimitives(name, factory);
  describeRecovery(name, factory);
  describeRunStoreContract(name, factory);
  describeRunExtrasContract(name, factory);
  describeHardeningContract(name, factory);
  describeSchedulingContract(name, factory);
  describeRunFeedsContract(name, factory);
  describeTimeoutsContract(name, factory);
  describeTimelineContract(name, factory);
  describe(`AgentRuntime on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    it("completes a run with a tool, with the RunResult a direct run gives", async () => {
      const durableSearch = searchTool();
      const durable = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [durableSearch.tool],
      });
      const runtime = await runtimes.start([durable], factory.create());

      const handle = await runtime.submit("support", "harnessx", { sessionId: "session-1" });
      const result = await handle.result();

      const directSearch = searchTool();
      const direct = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [directSearch.tool],
      });
      const expected = await direct.run("harnessx", {
        runId: result.runId,
        sessionId: "session-1",
      });
      expect(result).toEqual(expected);
      expect(result.status).toBe("completed");
      expect(result.output).toBe("Answer: Results for harnessx");
      expect(durableSearch.calls.get("harnessx")).toBe(1);
    });

    it("completes 20 concurrent runs, each handler once", async () => {
      const search = searchTool();
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
      });
      const runtime = await runtimes.start([agent], factory.create());

      const queries = Array.from({ length: 20 }, (_, index) => `query-${index}`);
      const handles = await Promise.all(queries.map((query) => runtime.submit("support", query)));
      const results = await Promise.all(handles.map((handle) => handle.result()));

      expect(results.map((result) => result.status)).toEqual(queries.map(() => "completed"));
      expect(results.map((result) => result.output)).toEqual(
        queries.map((query) => `Answer: Results for ${query}`),
      );
      expect(Object.fromEntries(search.calls)).toEqual(
        Object.fromEntries(queries.map((query) => [query, 1])),
      );
      const listed = await runtime.list({ status: "completed" });
      expect(listed.runs.map((run) => run.runId).sort()).toEqual(
        results.map((result) => result.runId).sort(),
      );
    });

    it("parks a run for approval; approve runs the handler and completes it", async () => {
      const { agent, deleted } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());

      const handle = await runtime.submit("ops", "old.log");
      const parked = await handle.result();
      expect(parked.status).toBe("awaiting_approval");
      expect(parked.pending).toEqual([
        {
          toolCallId: "call_1",
          name: "delete_file",
          input: { path: "old.log" },
          reason: "deleting needs a person",
        },
      ]);
      expect(deleted).toEqual([]);
      const waiting = await runtime.list({ status: "awaiting_approval" });
      expect(
        waiting.runs.map((run) => [run.runId, run.pending.map((each) => each.toolCallId)]),
      ).toEqual([[parked.runId, ["call_1"]]]);

      await runtime.approve(parked.runId, "call_1", { by: "ops-lead" });
      const finished = await handle.result();

      expect(finished.status).toBe("completed");
      expect(finished.output).toBe("Answer: deleted old.log");
      expect(deleted).toEqual(["old.log"]);
      expect(await runtime.list({ status: "awaiting_approval" })).toEqual({
        runs: [],
        nextCursor: null,
      });
    });

    it("applies a decision on a run of an agent with an approvalKey", async () => {
      const deletions = deleteTool();
      const agent = makeAgent("ops", {
        provider: oneToolModel("delete_file", { field: "path" }),
        tools: [deletions.tool],
        permissions: approvalPolicy(),
        approvalKey: "secret-key",
      });
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("ops", "old.log");
      expect((await handle.result()).status).toBe("awaiting_approval");

      await runtime.approve(handle.runId, "call_1");

      expect((await handle.result()).status).toBe("completed");
      expect(deletions.deleted).toEqual(["old.log"]);
    });

    it("deny: no handler runs and the model sees an error result", async () => {
      const { agent, deleted } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());

      const handle = await runtime.submit("ops", "old.log");
      expect((await handle.result()).status).toBe("awaiting_approval");
      await runtime.deny(handle.runId, "call_1", { by: "reviewer", reason: "keep it" });
      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(deleted).toEqual([]);
      expect(toolResults(result.messages)).toEqual([
        {
          type: "tool_result",
          toolCallId: "call_1",
          content: "Denied by reviewer: keep it",
          isError: true,
        },
      ]);
    });

    it("refuses decisions on an unknown run, an unknown call and a decided call", async () => {
      const handlerGate = gate();
      const deletions = deleteTool({ gate: handlerGate });
      const held = makeAgent("ops", {
        provider: oneToolModel("delete_file", { field: "path" }),
        tools: [deletions.tool],
        permissions: approvalPolicy(),
      });
      const runtime = await runtimes.start([held], factory.create());
      const handle = await runtime.submit("ops", "old.log");
      await handle.result();

      const code = async (promise: Promise<unknown>) => {
        const error = await rejection(promise);
        expect(error).toBeInstanceOf(ApprovalError);
        return (error as ApprovalError).code;
      };
      expect(await code(runtime.approve("no-such-run", "call_1"))).toBe("run_not_found");
      expect(await code(runtime.approve(handle.runId, "call_9"))).toBe("tool_call_not_found");

      await runtime.approve(handle.runId, "call_1");
      await handlerGate.entered; // approved and dispatched: the call is settled
      expect(await code(runtime.approve(handle.runId, "call_1"))).toBe("already_decided");
      expect(await code(runtime.deny(handle.runId, "call_1"))).toBe("already_decided");
      handlerGate.open();
      expect((await handle.result()).status).toBe("completed");
      expect(await code(runtime.deny(handle.runId, "call_1"))).toBe("already_decided");
      expect(deletions.deleted).toEqual(["old.log"]);
    });

    it("of two racing decisions exactly one wins", async () => {
      const { agent, deleted } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("ops", "old.log");
      await handle.result();

      const outcomes = await Promise.allSettled([
        runtime.approve(handle.runId, "call_1", { by: "first" }),
        runtime.deny(handle.runId, "call_1", { by: "second" }),
      ]);

      const won = outcomes.filter((outcome) => outcome.status === "fulfilled");
      const lost = outcomes.flatMap((outcome) =>
        outcome.status === "rejected" ? [outcome.reason as unknown] : [],
      );
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toBeInstanceOf(ApprovalError);
      expect((lost[0] as ApprovalError).code).toBe("already_decided");
      const result = await handle.result();
      expect(result.status).toBe("completed");
      const approved = outcomes[0]?.status === "fulfilled";
      expect(deleted).toEqual(approved ? ["old.log"] : []);
      expect(toolResults(result.messages)[0]?.isError).toBe(!approved);
    });

    it("streams tool_start, tool_end and result, also to a subscriber after the run ended", async () => {
      const search = searchTool();
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
      });
      const runtime = await runtimes.start([agent], factory.create());

      const handle = await runtime.submit("support", "cats");
      const live = await collect(handle.events());
      const late = await collect(runtime.handle(handle.runId).events());

      const result = await handle.result();
      const call = { id: "call_1", name: "search", input: { query: "cats" } };
      const expected: RunEvent[] = [
        { type: "tool_start", toolCall: call },
        {
          type: "tool_end",
          toolCall: call,
          result: { toolCallId: "call_1", content: "Results for cats", isError: false },
        },
        { type: "result", result },
      ];
      expect(withoutDeltas(live)).toEqual(expected);
      expect(late).toEqual(live);
      expect(
        live.flatMap((event) => (event.type === "text_delta" ? [event.text] : [])).join(""),
      ).toBe("Answer: Results for cats");
    });

    it("openToolCall reads a tool job's run, its call, the commit and the cancel flag, without the conversation", async () => {
      const handlerGate = gate();
      const search = searchTool({ gate: handlerGate });
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
      });
      const backend = factory.create();
      const runtime = await runtimes.start([agent], backend);
      const handle = await runtime.submit("support", "cats", { sessionId: "s-1", priority: 7 });
      await handlerGate.entered;

      const opened = await backend.openToolCall(handle.runId, 1, "call_1");
      expect(opened.committed).toBe(false);
      expect(opened.cancelRequested).toBe(false);
      const run = opened.run;
      expect(run).toMatchObject({
        runId: handle.runId,
        sessionId: "s-1",
        agent: "support",
        status: "running",
        phase: "dispatch",
        priority: 7,
        context: { runId: handle.runId, sessionId: "s-1", iteration: 1 },
        call: {
          call: { id: "call_1", name: "search", input: { query: "cats" } },
          status: "allowed",
        },
      });
      expect(run).not.toHaveProperty("messages");
      expect(JSON.stringify(run)).not.toContain("Answer");
      // A call the snapshot does not hold: the run without a call.
      const other = await backend.openToolCall(handle.runId, 1, "call_9");
      expect(other.run?.call).toBeUndefined();
      expect(other.run?.phase).toBe("dispatch");

      handlerGate.open();
      expect((await handle.result()).status).toBe("completed");
      const finished = await backend.openToolCall(handle.runId, 1, "call_1");
      expect(finished.committed).toBe(true);
      expect(finished.run?.status).toBe("completed");
      await backend.requestCancel(handle.runId);
      expect((await backend.openToolCall(handle.runId, 1, "call_1")).cancelRequested).toBe(true);
      expect(await backend.openToolCall("no-such-run", 1, "call_1")).toEqual({
        run: undefined,
        committed: false,
        cancelRequested: false,
      });
    });

    it("openToolCall gives a parked call's state, as the run's record holds it", async () => {
      const { agent } = approvalAgent();
      const backend = factory.create();
      const runtime = await runtimes.start([agent], backend);
      const handle = await runtime.submit("ops", "old.log");
      const parked = await handle.result();
      expect(parked.status).toBe("awaiting_approval");

      const { run } = await backend.openToolCall(handle.runId, 1, "call_1");
      const record = await backend.loadRun(handle.runId);
      const context = record?.snapshot?.context as { calls: unknown[] } | undefined;
      expect(run?.status).toBe("awaiting_approval");
      expect(run?.call).toEqual(context?.calls[0]);
      expect(run?.call?.status).toBe("asked");
    });

    it("streams across an approval pause", async () => {
      const { agent } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("ops", "old.log");

      const seen: RunEvent[] = [];
      for await (const event of handle.events()) {
        seen.push(event);
        if (event.type === "approval_required") {
          await runtime.approve(handle.runId, event.pending[0]?.toolCallId ?? "");
        }
      }

      expect(withoutDeltas(seen).map((event) => event.type)).toEqual([
        "approval_required",
        "tool_start",
        "tool_end",
        "result",
      ]);
      const last = seen.at(-1);
      expect(last?.type === "result" && last.result.status).toBe("completed");
    });

    it("saves and emits CHECKPOINT at every effect boundary, in order", async () => {
      const search = searchTool();
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
      });
      const checkpoints: Array<{
        phase: string;
        status: string;
        runId: string;
        sessionId: string;
      }> = [];
      agent.hooks.on(HookEvent.CHECKPOINT, (context) => {
        checkpoints.push({ ...context.data });
      });
      const ended = deferred<RunResult>();
      agent.hooks.on(HookEvent.AGENT_END, (context) => ended.resolve(context.data.result));
      const runtime = await runtimes.start([agent], factory.create());

      const handle = await runtime.submit("support", "cats", { sessionId: "s-7" });
      const result = await ended.promise;

      expect(result.status).toBe("completed");
      // The effect boundaries: after each provider response, at dispatch, after the results
      // entered the conversation, and at the end.
      expect(checkpoints.map((each) => each.phase)).toEqual([
        "afterLlm",
        "dispatch",
        "compose",
        "afterLlm",
        "done",
      ]);
      expect(checkpoints.map((each) => each.status)).toEqual([
        ...Array.from({ length: 4 }, () => "running"),
        "completed",
      ]);
      expect(
        checkpoints.every((each) => each.runId === handle.runId && each.sessionId === "s-7"),
      ).toBe(true);
    });

    it("parks a call the policy asks about at the tool job, as a direct run does", async () => {
      const search = searchTool();
      // Allowed when the step resolves and re-checks it; asked about from the third look on,
      // which is the tool job's re-check right before the handler.
      let looks = 0;
      const permissions = new PermissionManager({
        default: "allow",
        rules: [
          {
            tool: "search",
            when: () => {
              looks += 1;
              return looks > 2;
            },
            decision: "ask",
            reason: "searches need a person now",
          },
        ],
      });
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
        permissions,
      });
      const runtime = await runtimes.start([agent], factory.create());

      const handle = await runtime.submit("support", "cats");
      const parked = await handle.result();

      expect(parked.status).toBe("awaiting_approval");
      expect(parked.pending).toEqual([
        {
          toolCallId: "call_1",
          name: "search",
          input: { query: "cats" },
          reason: "searches need a person now",
        },
      ]);
      expect(search.total).toBe(0);

      await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
      const result = await handle.result();
      expect(result.status).toBe("completed");
      expect(result.output).toBe("Answer: Results for cats");
      expect(search.total).toBe(1);
    });

    it("runs, parks and resumes calls whose ids are odd strings from the model", async () => {
      const oddIds = [
        "__proto__",
        "constructor",
        "toString",
        "hasOwnProperty",
        "a:b/../c",
        ":",
        "../",
        "a#1",
        "\u0001",
        "工具-🔧-é\u0000ü",
        "\uD800",
        "x".repeat(10 * 1024),
      ];
      const search = searchTool();
      const deletions = deleteTool();
      const provider = new ScriptedProvider([
        toolCallResponse([
          ...oddIds.map((id) => ({ id: `s-${id}`, name: "search", input: { query: id } })),
          { id: "valueOf", name: "search", input: { query: "plain valueOf" } },
          ...oddIds.map((id) => ({ id, name: "delete_file", input: { path: `${id}.log` } })),
        ]),
        textResponse("done"),
      ]);
      const agent = makeAgent("ops", {
        provider,
        tools: [search.tool, deletions.tool],
        permissions: approvalPolicy(),
      });
      const runtime = await runtimes.start([agent], factory.create());

      const handle = await runtime.submit("ops", "clean up");
      const parked = await handle.result();
      expect(parked.status).toBe("awaiting_approval");
      expect(parked.pending.map((each) => each.toolCallId)).toEqual(oddIds);
      for (const id of oddIds) await runtime.approve(handle.runId, id, { by: "ops-lead" });
      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(deletions.deleted.sort()).toEqual(oddIds.map((id) => `${id}.log`).sort());
      expect(search.total).toBe(oddIds.length + 1);
      const results = toolResults(result.messages);
      expect(results.map((each) => each.toolCallId).sort()).toEqual(
        [...oddIds.map((id) => `s-${id}`), "valueOf", ...oddIds].sort(),
      );
      expect(results.every((each) => !each.isError)).toBe(true);
    });

    it("tells AGENT_START the input as submitted, a string or messages", async () => {
      const search = searchTool();
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
      });
      const inputs: unknown[] = [];
      agent.hooks.on(HookEvent.AGENT_START, (context) => {
        inputs.push(context.data.input);
      });
      const runtime = await runtimes.start([agent], factory.create());
      const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "dogs" }] }];

      await (await runtime.submit("support", "cats")).result();
      await (await runtime.submit("support", messages)).result();

      expect(inputs).toEqual(["cats", messages]);
    });

    it("cancels a running run at its next boundary", async () => {
      const providerGate = gate();
      const search = searchTool();
      const agent = makeAgent("support", {
        provider: oneToolModel("search", { before: () => providerGate.wait() }),
        tools: [search.tool],
      });
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("support", "cats");
      await providerGate.entered;

      await runtime.cancel(handle.runId);
      providerGate.open();
      const result = await handle.result();

      expect(result.status).toBe("cancelled");
      expect(result.error?.name).toBe("RunCancelledError");
      expect(search.total).toBe(0);
      expect((await runtime.list({ status: "cancelled" })).runs.map((run) => run.runId)).toEqual([
        handle.runId,
      ]);
    });

    it("cancels a parked run", async () => {
      const { agent, deleted } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("ops", "old.log");
      expect((await handle.result()).status).toBe("awaiting_approval");

      await runtime.cancel(handle.runId);
      const result = await handle.result();

      expect(result.status).toBe("cancelled");
      expect(result.pending).toEqual([]);
      expect(deleted).toEqual([]);
      const error = await rejection(runtime.approve(handle.runId, "call_1"));
      expect((error as ApprovalError).code).toBe("already_decided");
      const missing = await rejection(runtime.cancel("no-such-run"));
      expect(missing).toBeInstanceOf(RunNotFoundError);
    });

    it("refuses a run of an unknown agent at submit and stores nothing", async () => {
      const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [] });
      const runtime = await runtimes.start([agent], factory.create());

      const error = await rejection(runtime.submit("billing", "hello"));

      expect(error).toBeInstanceOf(UnknownAgentError);
      expect(HarnessError.isHarnessError(error) && error.code).toBe("config_invalid");
      expect((error as Error).message).toContain('"billing"');
      expect(await runtime.list()).toEqual({ runs: [], nextCursor: null });
    });

    it("fails a runaway model at maxIterations", async () => {
      const search = searchTool();
      const provider = new ScriptedProvider(
        [toolCallResponse([{ name: "search", input: { query: "again" } }])],
        { loop: true },
      );
      const runaway = makeAgent("runaway", { provider, tools: [search.tool], maxIterations: 3 });
      const runtime = await runtimes.start([runaway], factory.create());

      const result = await (await runtime.submit("runaway", "go")).result();

      expect(result.status).toBe("failed");
      expect(result.error?.name).toBe("MaxIterationsError");
      expect(result.iterations).toBe(3);
      expect(provider.callCount).toBe(3);
      expect(search.calls.get("again")).toBe(3);
    });

    it("fails a run of an agent without a provider, with AGENT_END", async () => {
      const agent = makeAgent("bare", { tools: [] });
      const ended = deferred<RunResult>();
      agent.hooks.on(HookEvent.AGENT_END, (context) => ended.resolve(context.data.result));
      const runtime = await runtimes.start([agent], factory.create());

      const result = await (await runtime.submit("bare", "hello")).result();

      expect(result.status).toBe("failed");
      expect(result.error?.name).toBe("ProviderMissingError");
      expect(await ended.promise).toEqual(result);
    });

    it("advances a run on one worker at a time, whatever duplicate steps are queued", async () => {
      const llmGate = gate();
      let inFlight = 0;
      let maxInFlight = 0;
      class Exclusive extends Middleware {
        override async beforeLlmCall(
          ...args: Parameters<Middleware["beforeLlmCall"]>
        ): ReturnType<Middleware["beforeLlmCall"]> {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          try {
            await llmGate.wait();
            return args;
          } finally {
            inFlight -= 1;
          }
        }
      }
      const search = searchTool();
      const provider = oneToolModel("search");
      const agent = makeAgent("support", {
        provider,
        tools: [search.tool],
        middleware: [new Exclusive()],
      });
      const observed = observeLeases(factory.create());
      const runtime = await runtimes.start([agent], observed.backend);

      const handle = await runtime.submit("support", "cats");
      await llmGate.entered;
      for (let index = 0; index < 5; index += 1) await observed.backend.enqueueStep(handle.runId);
      await observed.counters.waitForBusy(handle.runId, 5);
      llmGate.open();
      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(maxInFlight).toBe(1);
      expect(provider.callCount).toBe(2);
      expect(search.calls.get("cats")).toBe(1);
    });
  });
}

const record = (runId: string, status: RunRecord["status"], createdAt: number): RunRecord =>
  storedRun(runId, { status, createdAt });

const audit = (decision: "allow" | "deny", at: number): DecisionRecord => ({
  toolCallId: "call_1",
  name: "delete_file",
  decision,
  reason: null,
  by: "ops-lead",
  inputHash: "hash",
  at,
});

const listedIds = async (backend: RunBackend, query: Omit<RunQuery, "limit">) =>
  (await backend.listRuns({ limit: 50, ...query })).runs.map((each) => each.runId);

function describePrimitives(name: string, factory: BackendFactory): void {
  describe(`RunBackend primitives of ${name}`, () => {
    const started: RunBackend[] = [];
    const start = async () => {
      const backend = factory.create();
      started.push(backend);
      await backend.start({ concurrency: 1, logger: silent });
      return backend;
    };
    afterEach(async () => {
      await Promise.all(started.splice(0).map((backend) => backend.close({ timeoutMs: 1000 })));
      await factory.cleanup();
    });

    it("stores records once and lists them by status, newest first", async () => {
      const backend = await start();
      expect(await backend.createRun(record("b", "queued", 2))).toBe(true);
      expect(await backend.createRun(record("a", "queued", 1))).toBe(true);
      expect(await backend.createRun(record("c", "running", 3))).toBe(true);
      expect(await backend.createRun(record("a", "running", 9))).toBe(false);

      expect(await listedIds(backend, { status: "queued" })).toEqual(["b", "a"]);
      expect(await listedIds(backend, {})).toEqual(["c", "b", "a"]);
      expect(await backend.loadRun("a")).toEqual(record("a", "queued", 1));
      expect(await backend.loadRun("missing")).toBeUndefined();
    });

    it("fences writes: a lease holder that lost the lease cannot save", async () => {
      const backend = await start();
      await backend.createRun(record("run", "queued", 1));
      const first = await backend.acquireLease("run");
      if (!first.acquired) throw new Error("expected the lease");
      const busy = await backend.acquireLease("run");
      expect(busy.acquired).toBe(false);
      await backend.saveRun("run", first.token, record("run", "running", 1));
      expect(await backend.releaseLease("run", first.token)).toEqual({ wake: true });
      expect(await backend.releaseLease("run", first.token)).toEqual({ wake: false });

      const second = await backend.acquireLease("run");
      if (!second.acquired) throw new Error("expected the lease");
      expect(second.token).toBeGreaterThan(first.token);
      const stale = await rejection(
        backend.saveRun("run", first.token, record("run", "failed", 1)),
      );
      expect(stale).toBeInstanceOf(LeaseLostError);
      expect(await backend.renewLease("run", first.token)).toBe(false);
      expect(await backend.renewLease("run", second.token)).toBe(true);
      expect((await backend.loadRun("run"))?.status).toBe("running");
      expect(await listedIds(backend, { status: "running" })).toEqual(["run"]);
      expect(await listedIds(backend, { status: "queued" })).toEqual([]);

      await backend.requestCancel("run");
      expect(await backend.saveRun("run", second.token, record("run", "running", 1))).toEqual({
        cancelRequested: true,
      });
    });

    it("turns a queued run running as a worker takes its lease, before any save", async () => {
      const backend = await start();
      await backend.createRun(record("run", "queued", 1));
      await backend.createRun(record("other", "queued", 2));
      const stop = new AbortController();
      const changes = (await backend.watchRuns(stop.signal))[Symbol.asyncIterator]();
      const lease = await backend.acquireLease("run");
      if (!lease.acquired) throw new Error("expected the lease");

      expect((await backend.loadRun("run"))?.status).toBe("running");
      if (lease.opened !== undefined) expect(lease.opened.record?.status).toBe("running");
      expect(await listedIds(backend, { status: "running" })).toEqual(["run"]);
      expect(await listedIds(backend, { status: "queued" })).toEqual(["other"]);
      expect(await listedIds(backend, { agent: "support", status: "running" })).toEqual(["run"]);
      expect(await listedIds(backend, {})).toEqual(["other", "run"]);
      // On a Cluster, the two creations' announcements can still be on their way across the
      // cluster bus when the subscription is made: the one that matters is the lease's.
      let announced = await changes.next();
      while (!announced.done && announced.value.status === "queued") {
        announced = await changes.next();
      }
      expect(announced.done ? undefined : announced.value).toMatchObject({
        runId: "run",
        status: "running",
        createdAt: 1,
      });
      stop.abort();

      // Taking the lease of a running run changes nothing; a later save moves it on as before.
      await backend.releaseLease("run", lease.token);
      const again = await backend.acquireLease("run");
      if (!again.acquired) throw new Error("expected the lease");
      await backend.saveRun("run", again.token, record("run", "completed", 1));
      expect(await listedIds(backend, { status: "running" })).toEqual([]);
      expect(await listedIds(backend, { status: "completed" })).toEqual(["run"]);
    });

    it("gives the lease up with a save that asks to, saying whether a wake-up was left", async () => {
      const backend = await start();
      await backend.createRun(record("run", "queued", 1));
      const first = await backend.acquireLease("run");
      if (!first.acquired) throw new Error("expected the lease");
      expect((await backend.acquireLease("run")).acquired).toBe(false);
      const saved = await backend.saveRun(
        "run",
        first.token,
        record("run", "running", 1),
        [],
        undefined,
        { release: true },
      );
      expect(saved).toEqual({ cancelRequested: false, released: { wake: true } });

      const second = await backend.acquireLease("run");
      if (!second.acquired) throw new Error("expected the lease: the save gave it up");
      const quiet = await backend.saveRun(
        "run",
        second.token,
        record("run", "running", 1),
        [],
        undefined,
        { release: true },
      );
      expect(quiet.released).toEqual({ wake: false });
      expect((await backend.acquireLease("run")).acquired).toBe(true);
    });

    it("applies a run's saves in the order issued, and queues tool jobs right behind a save and those before it", async () => {
      const backend = factory.create();
      started.push(backend);
      const found = deferred<{ toolCallId: string; updatedAt: number | undefined }>();
      await backend.start({
        concurrency: 1,
        logger: silent,
        processors: {
          step: async () => undefined,
          tool: async (job) => {
            const run = await backend.loadRun(job.runId);
            found.resolve({ toolCallId: job.toolCallId, updatedAt: run?.updatedAt });
            return undefined;
          },
        },
      });
      await backend.createRun(record("run", "queued", 1));
      const lease = await backend.acquireLease("run");
      if (!lease.acquired) throw new Error("expected the lease");

      // Issued one after the other, each before the one before it resolved.
      const saves = [2, 3, 4].map((updatedAt) =>
        backend.saveRun("run", lease.token, { ...record("run", "running", 1), updatedAt }),
      );
      await Promise.all(saves);
      expect((await backend.loadRun("run"))?.updatedAt).toBe(4);

      // A save that queues tool jobs, issued right behind two saves not yet resolved.
      const behind = [5, 6].map((updatedAt) =>
        backend.saveRun("run", lease.token, { ...record("run", "running", 1), updatedAt }),
      );
      await backend.saveRun(
        "run",
        lease.token,
        { ...record("run", "running", 1), phase: "dispatch", updatedAt: 7 },
        [],
        undefined,
        {
          release: true,
          thenTools: [
            { runId: "run", iteration: 1, toolCallId: "call_1", agent: "support", tool: "search" },
          ],
        },
      );
      await Promise.all(behind);
      // The job finds the run as the save left it, after every save issued before it.
      expect(await found.promise).toEqual({ toolCallId: "call_1", updatedAt: 7 });
    });

    it("marks a call attempt started once, and records attempts waiting for a person, with why", async () => {
      const backend = await start();
      expect(await backend.markCallStarted("run", 1, "call_1")).toBe(true);
      expect(await backend.markCallStarted("run", 1, "call_1")).toBe(false);
      expect(await backend.markCallStarted("run", 1, "call_1#1")).toBe(true);
      expect(await backend.markCallStarted("run", 2, "call_1")).toBe(true);
      expect(await backend.markCallStarted("other", 1, "call_1")).toBe(true);
      expect(await backend.interruptedCalls("run", 1)).toEqual(new Map());

      await backend.markCallInterrupted("run", 1, "call_1", "a crash");
      await backend.markCallInterrupted("run", 1, "call_1", "the policy asks: refunds");

      expect(await backend.interruptedCalls("run", 1)).toEqual(
        new Map([["call_1", "the policy asks: refunds"]]),
      );
      expect(await backend.interruptedCalls("run", 2)).toEqual(new Map());
      // An interrupted attempt stays started: a later delivery of it recovers again.
      expect(await backend.markCallStarted("run", 1, "call_1")).toBe(false);
    });

    it("marks a call attempt started with a tool job's read, unless the run has no use for it", async () => {
      const backend = await start();
      await backend.createRun(record("run", "running", 1));
      expect((await backend.openToolCall("run", 1, "call_1", "call_1")).started).toBe(true);
      expect((await backend.openToolCall("run", 1, "call_1", "call_1")).started).toBe(false);
      expect(await backend.markCallStarted("run", 1, "call_1")).toBe(false);
      expect((await backend.openToolCall("run", 1, "call_1", "call_1#1")).started).toBe(true);
      // A read that does not ask marks nothing.
      expect((await backend.openToolCall("run", 1, "call_3")).started).toBeUndefined();
      expect(await backend.markCallStarted("run", 1, "call_3")).toBe(true);

      // Committed, cancelled, finished or unknown: no mark is tried, none is left.
      await backend.commitRaw("run", 1, { toolCallId: "call_2", content: "ok", isError: false });
      expect((await backend.openToolCall("run", 1, "call_2", "call_2")).started).toBeUndefined();
      expect(await backend.markCallStarted("run", 1, "call_2")).toBe(true);
      await backend.createRun(record("cancelled", "running", 1));
      await backend.requestCancel("cancelled");
      const cancelled = await backend.openToolCall("cancelled", 1, "call_1", "call_1");
      expect(cancelled).toMatchObject({ cancelRequested: true });
      expect(cancelled.started).toBeUndefined();
      expect(await backend.markCallStarted("cancelled", 1, "call_1")).toBe(true);
      await backend.createRun(record("done", "completed", 1));
      expect((await backend.openToolCall("done", 1, "call_1", "call_1")).started).toBeUndefined();
      expect(await backend.markCallStarted("done", 1, "call_1")).toBe(true);
      const unknown = await backend.openToolCall("nope", 1, "call_1", "call_1");
      expect(unknown).toEqual({ run: undefined, committed: false, cancelRequested: false });
    });

    it("applies a run's appends before the saves issued after them when it publishes in order", async () => {
      const backend = await start();
      expect(backend.publishesInOrder === true).toBe(factory.publishesInOrder ?? true);
      if (backend.publishesInOrder !== true) return;
      await backend.createRun(record("run", "queued", 1));
      const lease = await backend.acquireLease("run");
      if (!lease.acquired) throw new Error("expected the lease");
      const deltas: RunEvent[] = Array.from({ length: 20 }, (_, index) => ({
        type: "text_delta",
        text: `${index} `,
      }));
      const saved: RunEvent = { type: "tool_start", toolCall: { id: "c", name: "t", input: {} } };
      // Each issued before the replies of the ones before it: nothing waits in between.
      const appends = deltas.map((delta) => backend.publish("run", delta));
      const save = backend.saveRun("run", lease.token, record("run", "running", 1), [saved]);
      await Promise.all([...appends, save]);

      expect((await backend.readEvents("run", 0, 50)).events).toEqual([...deltas, saved]);
    });

    it("appends a call's start events with its start mark, and none when it was marked before", async () => {
      const backend = await start();
      const call = { id: "call_1", name: "search", input: { query: "x" } };
      const started: RunEvent[] = [{ type: "tool_start", toolCall: call }];
      expect(await backend.markCallStarted("run", 1, "call_1", started)).toBe(true);
      expect(await backend.markCallStarted("run", 1, "call_1", started)).toBe(false);
      expect(await backend.markCallStarted("run", 1, "call_2")).toBe(true);

      expect((await backend.readEvents("run", 0, 10)).events).toEqual(started);
    });

    it("appends a tool job's events with its commit, whether or not the commit wins", async () => {
      const backend = await start();
      await backend.createRun(record("run", "running", 1));
      const call = { id: "call_1", name: "search", input: { query: "x" } };
      const first: RunEvent[] = [{ type: "tool_start", toolCall: call }];
      const again: RunEvent[] = [{ type: "tool_start", toolCall: { ...call, input: {} } }];
      const result = { toolCallId: "call_1", content: "found", isError: false };
      expect(await backend.commitRaw("run", 1, result, first)).toBe(true);
      expect(await backend.commitRaw("run", 1, { ...result, content: "late" }, again)).toBe(false);
      expect(await backend.commitRaw("run", 1, { ...result, toolCallId: "call_2" })).toBe(true);

      expect(await backend.rawResults("run", 1)).toEqual({
        call_1: result,
        call_2: { ...result, toolCallId: "call_2" },
      });
      expect((await backend.readEvents("run", 0, 10)).events).toEqual([...first, ...again]);
    });

    it("keeps decisions per call attempt", async () => {
      const backend = await start();
      const allow = { id: "d-1", decision: "allow" as const, decidedAt: 1 };
      const deny = { id: "d-2", decision: "deny" as const, decidedAt: 2 };
      expect(await backend.decide("run", 1, "call_1", allow, audit("allow", 1))).toBe(true);
      expect(await backend.decide("run", 1, "call_1#1", deny, audit("deny", 2))).toBe(true);
      expect(await backend.decisions("run", 1)).toEqual({ call_1: allow, "call_1#1": deny });
    });

    it("keeps the first raw result and the first decision of a call", async () => {
      const backend = await start();
      const first = { toolCallId: "call_1", content: "first", isError: false };
      expect(await backend.commitRaw("run", 1, first)).toBe(true);
      expect(await backend.commitRaw("run", 1, { ...first, content: "second" })).toBe(false);
      expect(await backend.commitRaw("run", 2, { ...first, content: "next round" })).toBe(true);
      expect(await backend.rawResults("run", 1)).toEqual({ call_1: first });
      expect(await backend.rawResults("run", 2)).toEqual({
        call_1: { ...first, content: "next round" },
      });

      const allow = { id: "d-1", decision: "allow" as const, by: "a", decidedAt: 1 };
      expect(await backend.decide("run", 1, "call_1", allow, audit("allow", 1))).toBe(true);
      expect(
        await backend.decide(
          "run",
          1,
          "call_1",
          { id: "d-2", decision: "deny", decidedAt: 2 },
          audit("deny", 2),
        ),
      ).toBe(false);
      // Our own write, re-sent: it wins again, and joins the audit trail once.
      expect(await backend.decide("run", 1, "call_1", allow, audit("allow", 1))).toBe(true);
      expect(await backend.decisions("run", 1)).toEqual({ call_1: allow });
      expect(await backend.auditTrail("run")).toEqual([audit("allow", 1)]);
      expect(await backend.auditTrail("other")).toEqual([]);
      expect(await backend.decisions("run", 2)).toEqual({});
    });

    it("replays a run's events from the start and ends after the final result", async () => {
      const backend = await start();
      const call = { id: "call_1", name: "search", input: { query: "x" } };
      const finalResult: RunResult = {
        runId: "run",
        sessionId: "s",
        status: "completed",
        output: "done",
        error: null,
        pending: [],
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        iterations: 1,
        messages: [],
      };
      const reading = collect(backend.events("run"));
      await backend.publish("run", { type: "tool_start", toolCall: call });
      await backend.publish("run", {
        type: "result",
        result: { ...finalResult, status: "awaiting_approval", output: null },
      });
      await backend.publish("run", { type: "result", result: finalResult });
      await backend.publish("run", { type: "text_delta", text: "after the end" });

      const expected: RunEvent[] = [
        { type: "tool_start", toolCall: call },
        { type: "result", result: { ...finalResult, status: "awaiting_approval", output: null } },
        { type: "result", result: finalResult },
      ];
      expect(await reading).toEqual(expected);
      expect(await collect(backend.events("run"))).toEqual(expected);
    });
  });
}

/** A tool with a recovery policy whose handler counts its executions. */
function recoveryTool(policy: RecoveryPolicy) {
  let executions = 0;
  const definition = tool({
    name: `${policy}_op`,
    description: `An operation whose recovery is ${policy}.`,
    input: z.object({ query: z.string() }),
    recovery: policy,
    handler: async ({ query }) => {
      executions += 1;
      return `${policy} done for ${query}`;
    },
  });
  return {
    tool: definition,
    get executions() {
      return executions;
    },
  };
}

/**
 * A call in flight at a crash, played in one process: the call's start is marked (as the
 * crashed delivery did) before its tool job runs, with no raw result committed. The real
 * crashes, with worker processes killed, are in reliability.test.ts.
 */
function describeRecovery(name: string, factory: BackendFactory): void {
  describe(`recovery of a call in flight at a crash, on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    /** Submits a run of `toolName` and marks its call started while the model is held. */
    async function interruptedRun(
      policy: RecoveryPolicy,
      options: { permissions?: PermissionManager } = {},
    ) {
      const operation = recoveryTool(policy);
      const modelGate = gate();
      const agent = makeAgent("ops", {
        provider: oneToolModel(`${policy}_op`, { before: () => modelGate.wait() }),
        tools: [operation.tool],
        ...(options.permissions === undefined ? {} : { permissions: options.permissions }),
      });
      const backend = factory.create();
      const runtime = await runtimes.start([agent], backend);
      const handle = await runtime.submit("ops", "payload");
      await modelGate.entered;
      expect(await backend.markCallStarted(handle.runId, 1, "call_1")).toBe(true);
      modelGate.open();
      return { runtime, handle, operation, backend };
    }

    it("retry: runs the handler again and completes", async () => {
      const { handle, operation } = await interruptedRun("retry");

      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(result.output).toBe("Answer: retry done for payload");
      expect(operation.executions).toBe(1);
    });

    it("fail: commits an error result without running the handler, and completes", async () => {
      const { handle, operation } = await interruptedRun("fail");

      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(operation.executions).toBe(0);
      expect(toolResults(result.messages)).toEqual([
        {
          type: "tool_result",
          toolCallId: "call_1",
          content:
            "The tool call's outcome is unknown: its worker stopped answering while it ran (a crash, or an event loop blocked past lockDurationMs), so it may or may not have taken effect. It was not retried (recovery: fail).",
          isError: true,
        },
      ]);
    });

    it("ask: parks the run; approving runs the handler and completes", async () => {
      const { runtime, handle, operation } = await interruptedRun("ask");

      const parked = await handle.result();

      expect(parked.status).toBe("awaiting_approval");
      expect(parked.pending).toEqual([
        {
          toolCallId: "call_1",
          name: "ask_op",
          input: { query: "payload" },
          reason: expect.stringMatching(
            /outcome is unknown: .* may or may not have taken effect \(recovery: ask\)/,
          ) as string,
        },
      ]);
      expect(operation.executions).toBe(0);
      expect(
        (await runtime.list({ status: "awaiting_approval" })).runs.map((run) => run.runId),
      ).toEqual([handle.runId]);
      const events = await collectUntil(handle.events(), "approval_required");
      expect(events.at(-1)).toEqual({ type: "approval_required", pending: parked.pending });

      await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(result.output).toBe("Answer: ask done for payload");
      expect(operation.executions).toBe(1);
      const error = await rejection(runtime.approve(handle.runId, "call_1"));
      expect((error as ApprovalError).code).toBe("already_decided");
    });

    it("ask: denying gives the model an error result and runs no handler", async () => {
      const { runtime, handle, operation } = await interruptedRun("ask");
      expect((await handle.result()).status).toBe("awaiting_approval");

      await runtime.deny(handle.runId, "call_1", { reason: "not twice" });
      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(operation.executions).toBe(0);
      expect(toolResults(result.messages)).toEqual([
        {
          type: "tool_result",
          toolCallId: "call_1",
          content: "Denied by reviewer: not twice",
          isError: true,
        },
      ]);
    });

    it("ask after an approval: the earlier decision does not decide the new question", async () => {
      const permissions = new PermissionManager({
        default: "allow",
        rules: [{ tool: "ask_op", decision: "ask", reason: "a person decides" }],
      });
      const operation = recoveryTool("ask");
      const agent = makeAgent("ops", {
        provider: oneToolModel("ask_op"),
        tools: [operation.tool],
        permissions,
      });
      const backend = factory.create();
      const runtime = await runtimes.start([agent], backend);
      const handle = await runtime.submit("ops", "payload");
      const first = await handle.result();
      expect(first.pending.map((each) => each.reason)).toEqual(["a person decides"]);

      // Approved, then "crashed" in the handler: the call is asked about once more.
      expect(await backend.markCallStarted(handle.runId, 1, "call_1")).toBe(true);
      await runtime.approve(handle.runId, "call_1", { by: "first" });
      const again = await handle.result();

      expect(again.status).toBe("awaiting_approval");
      expect(again.pending.map((each) => each.reason)).toEqual([
        expect.stringMatching(/outcome is unknown/) as string,
      ]);
      expect(operation.executions).toBe(0);

      await runtime.approve(handle.runId, "call_1", { by: "second" });
      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(operation.executions).toBe(1);
    });
  });
}
