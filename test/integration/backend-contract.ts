// The behaviour every RunBackend gives AgentRuntime, run against memoryBackend() and
// redisBackend() alike (see memory-backend.test.ts and redis-backend.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunBackend } from "../../src/backend.js";
import {
  ApprovalError,
  ConfigError,
  HarnessError,
  HookEvent,
  type Message,
  Middleware,
  PermissionManager,
  type RecoveryPolicy,
  type RunEvent,
  RunNotFoundError,
  type RunResult,
  tool,
  UnknownAgentError,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { toolResults } from "../support/messages.js";
import { describeChildApprovalsContract } from "./children-approvals-contract.js";
import { describeChildrenContract } from "./children-contract.js";
import { describeDecisionsContract } from "./decisions-contract.js";
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
  withoutDeltas,
} from "./fixtures.js";
import { describeHandoffOutputContract } from "./handoff-output-contract.js";
import { describeHardeningContract } from "./hardening-contract.js";
import { describeRoleContracts } from "./roles/role-contracts.js";
import { describeRunExtrasContract } from "./run-extras-contract.js";
import { describeRunFeedsContract } from "./run-feeds-contract.js";
import { describeRunStoreContract } from "./run-store-contract.js";
import { describeSchedulingContract } from "./scheduling-contract.js";
import { describeTimelineContract } from "./timeline-contract.js";
import { describeTimeoutsContract } from "./timeouts-contract.js";
import { describeTreeKeysContract } from "./tree-keys-contract.js";

export interface BackendFactory {
  /** A started-fresh backend on storage no other test uses. */
  create(): RunBackend;
  /** Deletes what the test's backends stored. */
  cleanup(): Promise<void>;
  /**
   * Every key stored under the last backend created's prefix: only storage with keys has it (a
   * test that its data is all gone asks it).
   */
  storedKeys?(): Promise<string[]>;
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
  describeRoleContracts(name, factory);
  describeRecovery(name, factory);
  describeRunStoreContract(name, factory);
  describeRunExtrasContract(name, factory);
  describeHardeningContract(name, factory);
  describeSchedulingContract(name, factory);
  describeRunFeedsContract(name, factory);
  describeTimeoutsContract(name, factory);
  describeTimelineContract(name, factory);
  describeChildrenContract(name, factory);
  describeChildApprovalsContract(name, factory);
  describeTreeKeysContract(name, factory);
  describeDecisionsContract(name, factory);
  describeHandoffOutputContract(name, factory);
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
      const backend = factory.create();
      const runtime = await runtimes.start([agent], backend);
      const handle = await runtime.submit("support", "cats");
      await providerGate.entered;

      const refused = await rejection(runtime.cancel(handle.runId, { by: " " }));
      expect(refused).toBeInstanceOf(ConfigError);
      await runtime.cancel(handle.runId, { by: "ops-lead" });
      await runtime.cancel(handle.runId, { by: "second-asker" });
      providerGate.open();
      const result = await handle.result();

      expect(result.status).toBe("cancelled");
      expect(result.error?.name).toBe("RunCancelledError");
      expect(search.total).toBe(0);
      expect((await runtime.list({ status: "cancelled" })).runs.map((run) => run.runId)).toEqual([
        handle.runId,
      ]);
      // Who cancelled (the first one asked) is kept with the record, and goes with it.
      expect((await runtime.get(handle.runId)).cancelledBy).toBe("ops-lead");
      await runtime.delete(handle.runId);
      expect(await backend.cancelledBy(handle.runId)).toBeUndefined();
    });

    it("cancels a parked run", async () => {
      const { agent, deleted } = approvalAgent();
      const runtime = await runtimes.start([agent], factory.create());
      const handle = await runtime.submit("ops", "old.log");
      expect((await handle.result()).status).toBe("awaiting_approval");

      await runtime.cancel(handle.runId);
      const result = await handle.result();

      expect(result.status).toBe("cancelled");
      expect(await runtime.get(handle.runId)).not.toHaveProperty("cancelledBy");
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
