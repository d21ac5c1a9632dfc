// SPEC §7.1 on a durable runtime: edit and approve, respond, quorum, recorded in the call
// ledger's atomic step, on every backend (memory, Redis, the Cluster).
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentRuntime,
  ApprovalError,
  HookEvent,
  Middleware,
  PermissionManager,
  type ProviderResponse,
  type ToolResult,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import type { BackendFactory } from "./backend-contract.js";
import { collect, Runtimes, rejection, silent } from "./fixtures.js";

/** `bank`: asks to wire 900 to acme; the policy asks `approvals` people, and denies over 1000. */
export function wireAgent(approvals = 1, approvalTimeoutMs?: number) {
  const wired: Array<{ to: string; amount: number }> = [];
  let beforeTool = 0;
  const wire = tool({
    name: "wire",
    description: "Wire money.",
    input: z.object({ to: z.string(), amount: z.number().positive() }),
    handler: async (input) => {
      wired.push(input);
      return `wired ${input.amount} to ${input.to}`;
    },
  });
  class Counting extends Middleware {
    override async beforeToolExecution(
      ...args: Parameters<Middleware["beforeToolExecution"]>
    ): ReturnType<Middleware["beforeToolExecution"]> {
      beforeTool += 1;
      return args[0];
    }
    override async afterToolExecution(result: ToolResult): Promise<ToolResult> {
      return { ...result, content: `[checked] ${result.content}` };
    }
  }
  const provider = new ScriptedProvider(
    [
      async (request): Promise<ProviderResponse> => {
        const last = request.messages.at(-1);
        if (last?.role === "tool") {
          const answer = last.content.map((block) =>
            block.type === "tool_result" ? block.content : "",
          );
          return textResponse(`Done: ${answer.join("")}`);
        }
        return toolCallResponse([{ name: "wire", input: { to: "acme", amount: 900 } }]);
      },
    ],
    { loop: true },
  );
  const agent = new Agent({
    config: { name: "bank", ...(approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs }) },
    logger: silent,
    provider,
    tools: [wire],
    middleware: [new Counting()],
    permissions: new PermissionManager({
      rules: [
        { tool: "wire", decision: "ask", approvals, reason: "money leaves" },
        { tool: "wire", when: (call) => Number(call.input.amount) > 1000, decision: "deny" },
      ],
    }),
  });
  const ended: ToolResult[] = [];
  agent.hooks.on(HookEvent.TOOL_CALL_END, (context) => {
    ended.push(context.data.result);
  });
  return {
    agent,
    wired,
    ended,
    get beforeTool() {
      return beforeTool;
    },
  };
}

const codeOf = async (promise: Promise<unknown>) => {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(ApprovalError);
  return (error as ApprovalError).code;
};

export function describeDecisionsContract(name: string, factory: BackendFactory): void {
  describe(`decisions (edit, respond, quorum) on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    async function parkedWire(approvals = 1): Promise<{
      bank: ReturnType<typeof wireAgent>;
      runtime: AgentRuntime;
      runId: string;
      result: () => ReturnType<ReturnType<AgentRuntime["handle"]>["result"]>;
    }> {
      const bank = wireAgent(approvals);
      const runtime = await runtimes.start([bank.agent], factory.create());
      const handle = await runtime.submit("bank", "pay acme");
      expect((await handle.result()).status).toBe("awaiting_approval");
      return { bank, runtime, runId: handle.runId, result: () => handle.result() };
    }

    it("edit and approve: the handler gets the edit, beforeToolExecution runs once, the audit keeps both hashes", async () => {
      const { bank, runtime, runId, result } = await parkedWire();
      await runtime.approve(runId, "call_1", { by: "ops", input: { to: "acme", amount: 500 } });
      const done = await result();
      expect(done.status).toBe("completed");
      expect(done.output).toBe("Done: [checked] wired 500 to acme");
      expect(bank.wired).toEqual([{ to: "acme", amount: 500 }]);
      expect(bank.beforeTool).toBe(1);
      const [audit] = (await runtime.get(runId)).decisions;
      expect(audit).toMatchObject({
        decision: "allow",
        by: "ops",
        editedInput: { to: "acme", amount: 500 },
      });
      expect(audit?.inputHash).toMatch(/^[0-9a-f]{64}$/);
      expect(audit?.editedInputHash).toMatch(/^[0-9a-f]{64}$/);
      expect(audit?.editedInputHash).not.toBe(audit?.inputHash);
    });

    it("refuses an invalid edit, an edit with extra keys and one the policy denies; the call keeps waiting", async () => {
      const { bank, runtime, runId, result } = await parkedWire();
      expect(
        await codeOf(runtime.approve(runId, "call_1", { input: { to: "acme", amount: "lots" } })),
      ).toBe("input_invalid");
      expect(
        await codeOf(
          runtime.approve(runId, "call_1", { input: { to: "acme", amount: 5, memo: "x" } }),
        ),
      ).toBe("input_invalid");
      expect(
        await codeOf(runtime.approve(runId, "call_1", { input: { to: "acme", amount: 5000 } })),
      ).toBe("approval_refused");
      expect((await runtime.get(runId)).decisions).toEqual([]);
      expect((await result()).status).toBe("awaiting_approval");
      await runtime.approve(runId, "call_1", { by: "ops" });
      expect((await result()).status).toBe("completed");
      expect(bank.wired).toEqual([{ to: "acme", amount: 900 }]);
    });

    it("racing editors: exactly one edit wins, and the handler runs it", async () => {
      const { bank, runtime, runId, result } = await parkedWire();
      const outcomes = await Promise.allSettled([
        runtime.approve(runId, "call_1", { by: "a", input: { to: "acme", amount: 100 } }),
        runtime.approve(runId, "call_1", { by: "b", input: { to: "acme", amount: 200 } }),
      ]);
      expect(outcomes.filter((each) => each.status === "fulfilled")).toHaveLength(1);
      const lost = outcomes.find((each) => each.status === "rejected");
      expect((lost as PromiseRejectedResult).reason.code).toBe("already_decided");
      expect((await result()).status).toBe("completed");
      expect(bank.wired).toHaveLength(1);
      const winner = (await runtime.get(runId)).decisions;
      expect(winner).toHaveLength(1);
      expect(bank.wired[0]).toEqual(winner[0]?.editedInput);
    });

    it("respond: the content is the call's result, the handler never runs, middleware and hooks see it", async () => {
      const { bank, runtime, runId, result } = await parkedWire();
      await runtime.respond(runId, "call_1", {
        by: "ops",
        content: "the bank is closed today",
        isError: true,
      });
      const done = await result();
      expect(done.status).toBe("completed");
      expect(done.output).toBe("Done: [checked] the bank is closed today");
      expect(bank.wired).toEqual([]);
      expect(bank.ended).toEqual([
        { toolCallId: "call_1", content: "[checked] the bank is closed today", isError: true },
      ]);
      expect((await runtime.get(runId)).decisions).toMatchObject([
        {
          decision: "respond",
          by: "ops",
          response: { content: "the bank is closed today", isError: true },
        },
      ]);
    });

    it("refuses a response over maxToolResultBytes and records nothing", async () => {
      const { runtime, runId, result } = await parkedWire();
      expect(
        await codeOf(
          runtime.respond(runId, "call_1", { by: "ops", content: "x".repeat(2_000_000) }),
        ),
      ).toBe("input_too_large");
      expect((await runtime.get(runId)).decisions).toEqual([]);
      expect((await result()).status).toBe("awaiting_approval");
    });

    it("quorum: two distinct people; the same person twice is refused; the waiting call shows who approved", async () => {
      const { bank, runtime, runId, result } = await parkedWire(2);
      expect((await result()).pending[0]?.approvals).toEqual({ needed: 2, given: [] });
      expect(await codeOf(runtime.approve(runId, "call_1"))).toBe("approval_invalid");
      await runtime.approve(runId, "call_1", { by: "alice", reason: "known payee" });
      const waiting = await result();
      expect(waiting.status).toBe("awaiting_approval");
      expect(waiting.pending[0]?.approvals).toMatchObject({
        needed: 2,
        given: [{ by: "alice", reason: "known payee" }],
      });
      const listed = await runtime.list({ status: "awaiting_approval" });
      expect(listed.runs[0]?.pending[0]?.approvals?.given.map((each) => each.by)).toEqual([
        "alice",
      ]);
      expect(await codeOf(runtime.approve(runId, "call_1", { by: "alice" }))).toBe(
        "approver_repeated",
      );
      expect(bank.wired).toEqual([]);
      await runtime.approve(runId, "call_1", { by: "bob" });
      expect((await result()).status).toBe("completed");
      expect(bank.wired).toEqual([{ to: "acme", amount: 900 }]);
      const audit = (await runtime.get(runId)).decisions;
      expect(audit.map((each) => [each.by, each.decision, each.approvalsNeeded])).toEqual([
        ["alice", "allow", 2],
        ["bob", "allow", 2],
      ]);
    });

    it("quorum: two approvers at once both count, once each", async () => {
      const { bank, runtime, runId, result } = await parkedWire(2);
      await Promise.all([
        runtime.approve(runId, "call_1", { by: "alice" }),
        runtime.approve(runId, "call_1", { by: "bob" }),
      ]);
      expect((await result()).status).toBe("completed");
      expect(bank.wired).toHaveLength(1);
      expect((await runtime.get(runId)).decisions.map((each) => each.by).sort()).toEqual([
        "alice",
        "bob",
      ]);
    });

    it("quorum: one deny denies at once", async () => {
      const { bank, runtime, runId, result } = await parkedWire(2);
      await runtime.approve(runId, "call_1", { by: "alice" });
      await runtime.deny(runId, "call_1", { by: "bob", reason: "not today" });
      const done = await result();
      expect(done.status).toBe("completed");
      expect(done.output).toContain("not today");
      expect(bank.wired).toEqual([]);
      expect(await codeOf(runtime.approve(runId, "call_1", { by: "carol" }))).toBe(
        "already_decided",
      );
    });

    it("approvalTimeoutMs denies a call only partly approved: it was still waiting", async () => {
      const bank = wireAgent(2, 400);
      const runtime = await runtimes.start([bank.agent], factory.create());
      const handle = await runtime.submit("bank", "pay acme");
      expect((await handle.result()).status).toBe("awaiting_approval");
      await runtime.approve(handle.runId, "call_1", { by: "alice" });
      const events = await collect(handle.events());
      const final = events.at(-1);
      expect(final?.type === "result" && final.result.output).toMatch(/approval timed out/);
      expect(bank.wired).toEqual([]);
      expect((await runtime.get(handle.runId)).decisions.map((each) => each.by)).toEqual([
        "alice",
        "harnessx",
      ]);
    });

    it("quorum with edits: approvals count only for the same input", async () => {
      const { bank, runtime, runId, result } = await parkedWire(2);
      const edit = { to: "acme", amount: 400 };
      await runtime.approve(runId, "call_1", { by: "alice", input: edit });
      await runtime.approve(runId, "call_1", { by: "bob" }); // the original input: no quorum yet
      const waiting = await result();
      expect(waiting.status).toBe("awaiting_approval");
      expect(waiting.pending[0]?.approvals?.given.map((each) => each.by)).toEqual(["alice", "bob"]);
      await runtime.approve(runId, "call_1", { by: "carol", input: { amount: 400, to: "acme" } });
      expect((await result()).status).toBe("completed");
      expect(bank.wired).toEqual([edit]);
    });
  });
}
