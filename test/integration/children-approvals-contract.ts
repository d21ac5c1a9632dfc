// Approvals around child runs (SPEC §14, agents as tools) on every backend: run on memory,
// Redis and a Redis Cluster by describeBackendContract. A child's ASK parks the child only; a
// parent's own agent-tool call asked and approved starts its child, and the parent waits for it.
import { afterEach, describe, expect, it } from "vitest";
import { AgentRuntime, type ApprovalRequest, PermissionManager } from "../../src/index.js";
import type { RunBackend } from "../../src/store/backend.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { gate } from "../support/gate.js";
import type { BackendFactory } from "./backend-contract.js";
import {
  agent,
  echoModel,
  lastUserText,
  leadModel,
  toolResults,
  until,
} from "./children-contract.js";
import { Runtimes, silent } from "./fixtures.js";

export function describeChildApprovalsContract(name: string, factory: BackendFactory): void {
  describe(`approvals around child runs on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    const start = (agents: Parameters<Runtimes["start"]>[0]): Promise<AgentRuntime> =>
      runtimes.start(agents, factory.create());

    it("keeps the parent waiting while the child its approved call started runs, and wakes it once", async () => {
      const held = gate();
      const researcher = agent("researcher", {
        provider: new ScriptedProvider(
          [
            async (request) => {
              await held.wait();
              return textResponse(`notes on ${lastUserText(request)}`);
            },
          ],
          { loop: true },
        ),
      });
      const lead = agent("lead", {
        provider: leadModel(["otters"]),
        tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
        permissions: new PermissionManager({ rules: [{ tool: "research", decision: "ask" }] }),
      });
      const parentRunId = "asked-fan-out";
      const childId = `${parentRunId}.c0`;
      let stepsQueued = 0;
      const backend = factory.create();
      const counted = new Proxy(backend, {
        get(target, property) {
          const value = Reflect.get(target, property, target) as unknown;
          if (property === "enqueueStep") {
            return (...args: Parameters<RunBackend["enqueueStep"]>) => {
              if (args[0] === parentRunId) stepsQueued += 1;
              return target.enqueueStep(...args);
            };
          }
          return typeof value === "function"
            ? (value as (...args: unknown[]) => unknown).bind(target)
            : value;
        },
      });
      const runtime = await runtimes.start([lead, researcher], counted);
      const handle = await runtime.submit("lead", "write", { runId: parentRunId });
      await until(
        () => runtime.get(parentRunId),
        (run) => run.status === "awaiting_approval",
      );
      await runtime.approve(parentRunId, "c0", { by: "ops" });
      await held.entered;
      // The child's model is held: the parent waits for it, and no wake-up is queued yet.
      const queuedWhileHeld = stepsQueued;
      expect((await runtime.get(parentRunId)).status).toBe("waiting");
      expect((await runtime.list({ status: "waiting" })).runs.map((run) => run.runId)).toEqual([
        parentRunId,
      ]);
      expect((await runtime.overview({ window: "1h" })).counts.waiting).toBe(1);
      held.open();
      const result = await handle.result();
      expect(result.status).toBe("completed");
      expect(toolResults(result).map((each) => [each.toolCallId, each.content])).toEqual([
        ["c0", "notes on otters"],
      ]);
      // One wake-up: the child's.
      expect(stepsQueued - queuedWhileHeld).toBe(1);
      const { events } = await runtime.events(parentRunId);
      expect(events.filter((event) => event.type === "child_started")).toEqual([
        { type: "child_started", childRunId: childId, agent: "researcher", toolCallId: "c0" },
      ]);
      expect(events.filter((event) => event.type === "child_finished")).toHaveLength(1);
      expect((await runtime.list({ parentRunId })).runs.map((run) => run.runId)).toEqual([childId]);
      expect((await runtime.overview({ window: "1h" })).counts.waiting).toBe(0);
    });

    it("parks only the child on its ASK; its approval finishes the child, then the parent", async () => {
      const careful = agent("careful", {
        provider: new ScriptedProvider([
          toolCallResponse([{ name: "inner", input: { input: "x" }, id: "k1" }]),
          textResponse("careful done"),
        ]),
        tools: [agent("inner", { provider: echoModel() }).asTool({ description: "Inner" })],
        permissions: new PermissionManager({ rules: [{ tool: "inner", decision: "ask" }] }),
      });
      const inner = agent("inner", { provider: echoModel() });
      const lead = agent("lead", {
        provider: leadModel(["go"], "careful"),
        tools: [careful.asTool({ description: "Careful" })],
      });
      const runtime = await start([lead, careful, inner]);
      const handle = await runtime.submit("lead", "go");
      const childId = `${handle.runId}.c0`;
      const parked = await until(
        () => runtime.list({ rootRunId: handle.runId, status: "awaiting_approval" }),
        (page) => page.runs.length > 0,
      );
      expect(parked.runs.map((each) => [each.runId, each.rootRunId])).toEqual([
        [childId, handle.runId],
      ]);
      expect((await runtime.get(handle.runId)).status).not.toBe("awaiting_approval");
      await runtime.approve(childId, "k1", { by: "ops" });
      const result = await handle.result();
      expect(result.status).toBe("completed");
      expect(toolResults(result)[0]?.content).toBe("careful done");
    });

    it("names the tree's root in a parked child's approval notice and its summary", async () => {
      const careful = agent("careful", {
        provider: new ScriptedProvider([
          toolCallResponse([{ name: "inner", input: { input: "x" }, id: "k1" }]),
          textResponse("careful done"),
        ]),
        tools: [agent("inner", { provider: echoModel() }).asTool({ description: "Inner" })],
        permissions: new PermissionManager({ rules: [{ tool: "inner", decision: "ask" }] }),
      });
      const lead = agent("lead", {
        provider: leadModel(["go"], "careful"),
        tools: [careful.asTool({ description: "Careful" })],
      });
      const notices: ApprovalRequest[] = [];
      const runtime = new AgentRuntime({
        agents: [lead, careful, agent("inner", { provider: echoModel() })],
        backend: factory.create(),
        logger: silent,
        onApprovalRequested: (request) => {
          notices.push(request);
        },
      });
      await runtime.start();
      try {
        const handle = await runtime.submit("lead", "go");
        const childId = `${handle.runId}.c0`;
        await until(
          async () => notices.length,
          (count) => count > 0,
        );
        expect(notices).toEqual([
          expect.objectContaining({ runId: childId, toolCallId: "k1", rootRunId: handle.runId }),
        ]);
        const parked = await runtime.list({ status: "awaiting_approval" });
        expect(parked.runs.map((each) => [each.runId, each.parentRunId, each.rootRunId])).toEqual([
          [childId, handle.runId, handle.runId],
        ]);
        expect((await runtime.get(childId)).parentToolCallId).toBe("c0");
        await runtime.approve(childId, "k1", { by: "ops" });
        expect((await handle.result()).status).toBe("completed");
      } finally {
        await runtime.close({ timeoutMs: 5000 });
      }
    });
  });
}
