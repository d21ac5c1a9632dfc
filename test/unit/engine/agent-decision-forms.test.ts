// SPEC §7.1 on direct runs: `agent.resume` with an edit, a respond, and a quorum, from the
// agent's own parked runs and from ParkedRun data given back in another "process".
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type ApprovalError,
  HookEvent,
  Middleware,
  PermissionManager,
  type ToolResult,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { toolResults } from "../../support/messages.js";
import { rejection } from "../../support/rejection.js";
import { silent } from "../../support/silent.js";

function bank(approvals = 1) {
  const wired: unknown[] = [];
  const ended: ToolResult[] = [];
  let beforeTool = 0;
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
  const agent = new Agent({
    // Stateless, as an agent "built the same way" in another process must be.
    provider: new ScriptedProvider(
      [
        async (request) =>
          request.messages.at(-1)?.role === "tool"
            ? textResponse("done")
            : toolCallResponse([{ name: "wire", input: { to: "acme", amount: 900 } }]),
      ],
      { loop: true },
    ),
    tools: [
      tool({
        name: "wire",
        description: "Wire money.",
        input: z.object({ to: z.string(), amount: z.number().positive() }),
        handler: async (input) => {
          wired.push(input);
          return `wired ${input.amount}`;
        },
      }),
    ],
    middleware: [new Counting()],
    permissions: new PermissionManager({
      rules: [
        { tool: "wire", decision: "ask", approvals },
        { tool: "wire", when: (call) => Number(call.input.amount) > 1000, decision: "deny" },
      ],
    }),
    logger: silent,
  });
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

const codeOf = async (promise: Promise<unknown>) =>
  ((await rejection(promise)) as ApprovalError).code;

describe("agent.resume with the decision forms of SPEC §7.1", () => {
  it("edit and approve: the handler gets the edited input, beforeToolExecution is not run again", async () => {
    const b = bank();
    const parked = await b.agent.run("pay");
    const [pending] = parked.pending;
    expect(pending?.approvals).toBeUndefined();
    const result = await b.agent.resume(parked.runId, {
      decisions: { call_1: { decision: "allow", input: { to: "acme", amount: 500 }, by: "ops" } },
    });
    expect(result.status).toBe("completed");
    expect(b.wired).toEqual([{ to: "acme", amount: 500 }]);
    expect(b.beforeTool).toBe(1);
    expect(toolResults(result.messages).map((block) => block.content)).toEqual([
      "[checked] wired 500",
    ]);
  });

  it("refuses a bad edit before anything changes; the run stays parked and can be decided", async () => {
    const b = bank();
    const parked = await b.agent.run("pay");
    const edit = (input: Record<string, unknown>) =>
      b.agent.resume(parked.runId, { decisions: { call_1: { decision: "allow", input } } });
    expect(await codeOf(edit({ to: "acme" }))).toBe("input_invalid");
    expect(await codeOf(edit({ to: "acme", amount: 5, note: "extra" }))).toBe("input_invalid");
    expect(await codeOf(edit({ to: "acme", amount: 5000 }))).toBe("approval_refused");
    expect(b.agent.parkedRunIds()).toEqual([parked.runId]);
    const result = await b.agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    expect(b.wired).toEqual([{ to: "acme", amount: 900 }]);
    expect(result.status).toBe("completed");
  });

  it("respond: the content is the result, the handler never runs, middleware and TOOL_CALL_END see it", async () => {
    const b = bank();
    const parked = await b.agent.run("pay");
    const result = await b.agent.resume(parked.runId, {
      decisions: { call_1: { decision: "respond", content: "closed today", isError: true } },
    });
    expect(result.status).toBe("completed");
    expect(b.wired).toEqual([]);
    expect(b.ended).toEqual([
      { toolCallId: "call_1", content: "[checked] closed today", isError: true },
    ]);
  });

  it("refuses a response over maxToolResultBytes", async () => {
    const b = bank();
    const parked = await b.agent.run("pay");
    const big = "x".repeat(2_000_000);
    expect(
      await codeOf(
        b.agent.resume(parked.runId, {
          decisions: { call_1: { decision: "respond", content: big } },
        }),
      ),
    ).toBe("input_too_large");
    expect(b.agent.parkedRunIds()).toEqual([parked.runId]);
  });

  it("quorum: the run stays parked until two distinct people approved, also through ParkedRun data", async () => {
    const b = bank(2);
    const first = await b.agent.run("pay");
    expect(first.pending[0]?.approvals).toEqual({ needed: 2, given: [] });
    expect(await codeOf(b.agent.resume(first.runId, { decisions: { call_1: "allow" } }))).toBe(
      "approval_invalid",
    );
    const second = await b.agent.resume(first.runId, {
      decisions: { call_1: { decision: "allow", by: "alice", reason: "ok" } },
    });
    expect(second.status).toBe("awaiting_approval");
    expect(second.pending[0]?.approvals).toMatchObject({
      needed: 2,
      given: [{ by: "alice", reason: "ok" }],
    });
    expect(b.wired).toEqual([]);
    const data = b.agent.parked(first.runId);
    // Another process, an agent built the same way:
    const other = bank(2);
    expect(
      await codeOf(
        other.agent.resume(data, { decisions: { call_1: { decision: "allow", by: "alice" } } }),
      ),
    ).toBe("approver_repeated");
    const done = await other.agent.resume(data, {
      decisions: { call_1: { decision: "allow", by: "bob" } },
    });
    expect(done.status).toBe("completed");
    expect(other.wired).toEqual([{ to: "acme", amount: 900 }]);
  });

  it("quorum: an edit counts only with approvals of the same input; one deny denies at once", async () => {
    const b = bank(2);
    const parked = await b.agent.run("pay");
    const edit = { to: "acme", amount: 300 };
    await b.agent.resume(parked.runId, {
      decisions: { call_1: { decision: "allow", by: "alice", input: edit } },
    });
    const mixed = await b.agent.resume(parked.runId, {
      decisions: { call_1: { decision: "allow", by: "bob" } },
    });
    expect(mixed.status).toBe("awaiting_approval");
    const agreed = await b.agent.resume(parked.runId, {
      decisions: { call_1: { decision: "allow", by: "carol", input: { ...edit } } },
    });
    expect(agreed.status).toBe("completed");
    expect(b.wired).toEqual([edit]);

    const c = bank(2);
    const again = await c.agent.run("pay");
    await c.agent.resume(again.runId, {
      decisions: { call_1: { decision: "allow", by: "alice" } },
    });
    const denied = await c.agent.resume(again.runId, {
      decisions: { call_1: { decision: "deny", by: "bob" } },
    });
    expect(denied.status).toBe("completed");
    expect(c.wired).toEqual([]);
  });
});
