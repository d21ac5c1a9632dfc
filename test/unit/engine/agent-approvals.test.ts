import { describe, expect, it } from "vitest";
import {
  Agent,
  ApprovalError,
  HookEvent,
  PermissionManager,
  type PermissionRule,
  type RunEvent,
  type RunResult,
  type ToolCall,
  type ToolResult,
} from "../../../src/index.js";
import {
  ScriptedProvider,
  type ScriptedStep,
  textResponse,
  toolCallResponse,
} from "../../../src/testing.js";
import { collect } from "../../support/collect.js";
import { toolResults } from "../../support/messages.js";
import { countingTool } from "../../support/path-tool.js";
import { silent } from "../../support/silent.js";

function lastResult(events: readonly RunEvent[]): RunResult {
  const last = events.at(-1);
  if (last?.type !== "result") throw new Error(`expected a final result event, got ${last?.type}`);
  return last.result;
}

/** An agent with `delete_file` (asked, unless `rules` say otherwise) and `read_file` (allowed). */
function approvalAgent(steps: readonly ScriptedStep[], rules?: PermissionRule[]) {
  const deleteFile = countingTool("delete_file");
  const readFile = countingTool("read_file");
  const provider = new ScriptedProvider(steps);
  const permissions = new PermissionManager({
    default: "allow",
    rules: rules ?? [{ tool: "delete_*", decision: "ask", reason: "destructive" }],
  });
  const agent = new Agent({
    provider,
    tools: [deleteFile.tool, readFile.tool],
    permissions,
    logger: silent,
  });
  return { agent, provider, permissions, deleteFile, readFile };
}

const twoDeletes = () =>
  toolCallResponse([
    { name: "delete_file", input: { path: "a.txt" } },
    { name: "delete_file", input: { path: "b.txt" } },
  ]);

describe("a batch of calls with approvals", () => {
  it("one allowed and two asked calls: decisions in one resume, results in the model's call order", async () => {
    const { agent, provider, deleteFile, readFile } = approvalAgent([
      toolCallResponse([
        { name: "delete_file", input: { path: "a.txt" } },
        { name: "read_file", input: { path: "b.txt" } },
        { name: "delete_file", input: { path: "c.txt" } },
      ]),
      textResponse("Kept a.txt, deleted c.txt."),
    ]);
    const ended: ToolResult[] = [];
    agent.hooks.afterTool((context) => {
      ended.push(context.data.result);
    });

    const parked = await agent.run("Tidy up");

    expect(parked.status).toBe("awaiting_approval");
    expect(parked.pending).toEqual([
      {
        toolCallId: "call_1",
        name: "delete_file",
        input: { path: "a.txt" },
        reason: "destructive",
      },
      {
        toolCallId: "call_3",
        name: "delete_file",
        input: { path: "c.txt" },
        reason: "destructive",
      },
    ]);
    // The allowed call waits with its batch: nothing has run while the run is parked.
    expect(readFile.received).toEqual([]);
    expect(deleteFile.received).toEqual([]);

    // Decisions listed in the opposite order to the calls.
    const result = await agent.resume(parked.runId, {
      decisions: {
        call_3: { decision: "allow", by: "reviewer-1" },
        call_1: { decision: "deny", reason: "a.txt is still needed", by: "reviewer-2" },
      },
    });

    expect(result.status).toBe("completed");
    expect(result.output).toBe("Kept a.txt, deleted c.txt.");
    expect(result.runId).toBe(parked.runId);
    expect(result.pending).toEqual([]);
    expect(deleteFile.received).toEqual([{ path: "c.txt" }]);
    expect(readFile.received).toEqual([{ path: "b.txt" }]);

    const expected = [
      {
        type: "tool_result",
        toolCallId: "call_1",
        content: "Denied by reviewer: a.txt is still needed",
        isError: true,
      },
      {
        type: "tool_result",
        toolCallId: "call_2",
        content: "read_file done: b.txt",
        isError: false,
      },
      {
        type: "tool_result",
        toolCallId: "call_3",
        content: "delete_file done: c.txt",
        isError: false,
      },
    ];
    expect(toolResults(result.messages)).toEqual(expected);
    expect(result.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(provider.requests[1]?.messages.at(-1)).toEqual({ role: "tool", content: expected });
    expect(ended.map((each) => each.toolCallId)).toEqual(["call_1", "call_2", "call_3"]);
    expect(agent.parkedRunIds()).toEqual([]);
    provider.assertComplete();
  });

  it("a reviewer's plain `deny` gives an error result that says a reviewer denied it", async () => {
    const { agent, deleteFile } = approvalAgent([
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      textResponse("Not deleted."),
    ]);

    const parked = await agent.run("Delete a.txt");
    const result = await agent.resume(parked.runId, { decisions: { call_1: "deny" } });

    expect(result.status).toBe("completed");
    expect(deleteFile.received).toEqual([]);
    const [only] = toolResults(result.messages);
    expect(only?.isError).toBe(true);
    expect(only?.content).toMatch(/^Denied by reviewer/);
  });

  it("an approved call keeps its approval although the ask rule is still in force", async () => {
    const { agent, provider, deleteFile } = approvalAgent([
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      textResponse("Deleted."),
    ]);

    const parked = await agent.run("Delete a.txt");
    const result = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });

    expect(result.status).toBe("completed");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    provider.assertComplete();
  });

  it("a later response's call is asked again: an approval covers one call only", async () => {
    const { agent, provider, deleteFile } = approvalAgent([
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" }, id: "call_again" }]),
      textResponse("Deleted twice."),
    ]);

    const parked = await agent.run("Delete a.txt twice");
    const second = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });

    expect(second.status).toBe("awaiting_approval");
    expect(second.pending.map((each) => each.toolCallId)).toEqual(["call_again"]);
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    expect(provider.callCount).toBe(2);

    const done = await agent.resume(second.runId, { decisions: { call_again: "allow" } });

    expect(done.status).toBe("completed");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }, { path: "a.txt" }]);
    provider.assertComplete();
  });
});

describe("partial decisions", () => {
  it("deciding one of two keeps the run parked with the other pending; a second resume finishes it", async () => {
    const { agent, provider, deleteFile } = approvalAgent([twoDeletes(), textResponse("Done.")]);

    const parked = await agent.run("Delete both");
    expect(parked.pending.map((each) => each.toolCallId)).toEqual(["call_1", "call_2"]);

    const partial = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });

    expect(partial.status).toBe("awaiting_approval");
    expect(partial.runId).toBe(parked.runId);
    expect(partial.pending).toEqual([
      {
        toolCallId: "call_2",
        name: "delete_file",
        input: { path: "b.txt" },
        reason: "destructive",
      },
    ]);
    expect(deleteFile.received).toEqual([]);
    expect(provider.callCount).toBe(1);
    expect(agent.parkedRunIds()).toEqual([parked.runId]);
    expect(agent.parked(parked.runId).pending.map((each) => each.toolCallId)).toEqual(["call_2"]);

    const finished = await agent.resume(parked.runId, {
      decisions: { call_2: { decision: "deny", reason: "keep b" } },
    });

    expect(finished.status).toBe("completed");
    expect(finished.output).toBe("Done.");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    expect(toolResults(finished.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content: "delete_file done: a.txt",
        isError: false,
      },
      {
        type: "tool_result",
        toolCallId: "call_2",
        content: "Denied by reviewer: keep b",
        isError: true,
      },
    ]);
    expect(agent.parkedRunIds()).toEqual([]);
    provider.assertComplete();
  });
});

describe("the policy is checked again before dispatch", () => {
  it("a deny rule added while parked wins over a person's approval", async () => {
    const { agent, permissions, deleteFile } = approvalAgent([
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      textResponse("Could not delete."),
    ]);
    const started: ToolCall[] = [];
    agent.hooks.beforeTool((context) => {
      started.push(context.data.toolCall);
    });

    const parked = await agent.run("Delete a.txt");
    permissions.addRule({ tool: "delete_file", decision: "deny", reason: "freeze in effect" });
    const result = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });

    expect(result.status).toBe("completed");
    expect(deleteFile.received).toEqual([]);
    expect(started).toEqual([]);
    expect(toolResults(result.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content: "Permission denied at dispatch: freeze in effect",
        isError: true,
      },
    ]);
  });

  it("an ask rule removed while parked lets a deny default decide: the approved call is denied", async () => {
    const askRule: PermissionRule = { tool: "delete_file", decision: "ask", reason: "ask first" };
    const deleteFile = countingTool("delete_file");
    const permissions = new PermissionManager({ default: "deny", rules: [askRule] });
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
        textResponse("Could not delete."),
      ]),
      tools: [deleteFile.tool],
      permissions,
      logger: silent,
    });

    const parked = await agent.run("Delete a.txt");
    expect(parked.status).toBe("awaiting_approval");
    expect(permissions.removeRule(askRule)).toBe(true);

    const result = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });

    expect(result.status).toBe("completed");
    expect(deleteFile.received).toEqual([]);
    const [only] = toolResults(result.messages);
    expect(only?.isError).toBe(true);
    expect(only?.content).toMatch(/^Permission denied at dispatch: /);
    expect(only?.content).toContain("default");
  });

  it("removing the ask rule while parked does not disturb calls already approved", async () => {
    const { agent, permissions, deleteFile } = approvalAgent([twoDeletes(), textResponse("Done.")]);
    const askRule = permissions.rules[0] as PermissionRule;

    const parked = await agent.run("Delete both");
    const partial = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    expect(partial.status).toBe("awaiting_approval");

    permissions.removeRule(askRule);
    expect(permissions.rules).toEqual([]);
    const result = await agent.resume(parked.runId, { decisions: { call_2: "allow" } });

    expect(result.status).toBe("completed");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }, { path: "b.txt" }]);
    expect(toolResults(result.messages).map((each) => each.isError)).toEqual([false, false]);
  });

  it("an ask rule added while parked parks an allowed call of the same batch again", async () => {
    const { agent, permissions, deleteFile, readFile } = approvalAgent([
      toolCallResponse([
        { name: "delete_file", input: { path: "a.txt" } },
        { name: "read_file", input: { path: "b.txt" } },
      ]),
      textResponse("Done."),
    ]);

    const parked = await agent.run("Delete and read");
    expect(parked.pending.map((each) => each.toolCallId)).toEqual(["call_1"]);
    const registration = permissions.addRule({
      tool: "read_file",
      decision: "ask",
      reason: "reads need a person now",
    });

    const again = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });

    expect(again.status).toBe("awaiting_approval");
    expect(again.pending).toEqual([
      {
        toolCallId: "call_2",
        name: "read_file",
        input: { path: "b.txt" },
        reason: "reads need a person now",
      },
    ]);
    expect(deleteFile.received).toEqual([]);
    expect(readFile.received).toEqual([]);

    registration.close();
    const result = await agent.resume(parked.runId, { decisions: { call_2: "allow" } });

    expect(result.status).toBe("completed");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    expect(readFile.received).toEqual([{ path: "b.txt" }]);
  });
});

describe("hooks around a parked run", () => {
  it("AGENT_START fires once at the first run; AGENT_END only when the resumed run finishes", async () => {
    const { agent, deleteFile } = approvalAgent([twoDeletes(), textResponse("Done.")]);
    const starts: string[] = [];
    const ends: RunResult[] = [];
    agent.hooks.on(HookEvent.AGENT_START, (context) => {
      starts.push(context.data.runId);
    });
    agent.hooks.on(HookEvent.AGENT_END, (context) => {
      ends.push(context.data.result);
    });

    const parked = await agent.run("Delete both");
    expect(starts).toEqual([parked.runId]);
    expect(ends).toEqual([]);

    await agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    expect(ends).toEqual([]);

    const finished = await agent.resume(parked.runId, { decisions: { call_2: "allow" } });

    expect(finished.status).toBe("completed");
    expect(deleteFile.received).toHaveLength(2);
    expect(starts).toEqual([parked.runId]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toEqual(finished);
  });
});

describe("streaming approvals", () => {
  it("runStream emits approval_required and ends with an awaiting_approval result; resumeStream finishes", async () => {
    const { agent, deleteFile } = approvalAgent([
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      textResponse("Deleted a.txt."),
    ]);

    const first = await collect(agent.runStream("Delete a.txt"));

    const parked = lastResult(first);
    expect(parked.status).toBe("awaiting_approval");
    const approvals = first.filter((event) => event.type === "approval_required");
    expect(approvals).toEqual([
      {
        type: "approval_required",
        pending: [
          {
            toolCallId: "call_1",
            name: "delete_file",
            input: { path: "a.txt" },
            reason: "destructive",
          },
        ],
      },
    ]);
    expect(first.at(-2)?.type).toBe("approval_required");
    expect(first.some((event) => event.type === "tool_start")).toBe(false);
    expect(deleteFile.received).toEqual([]);

    const second = await collect(
      agent.resumeStream(parked.runId, { decisions: { call_1: "allow" } }),
    );

    const types = second.map((event) => event.type);
    expect(types.indexOf("tool_start")).toBeGreaterThanOrEqual(0);
    expect(types.indexOf("tool_start")).toBeLessThan(types.indexOf("tool_end"));
    expect(types.filter((type) => type === "approval_required")).toEqual([]);
    const toolEnd = second.find((event) => event.type === "tool_end");
    expect(toolEnd).toEqual({
      type: "tool_end",
      toolCall: { id: "call_1", name: "delete_file", input: { path: "a.txt" } },
      result: { toolCallId: "call_1", content: "delete_file done: a.txt", isError: false },
    });
    const text = second
      .flatMap((event) => (event.type === "text_delta" ? [event.text] : []))
      .join("");
    expect(text).toBe("Deleted a.txt.");
    const finished = lastResult(second);
    expect(finished.status).toBe("completed");
    expect(finished.output).toBe("Deleted a.txt.");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
  });

  it("resumeStream with invalid decisions throws the ApprovalError and leaves the run parked", async () => {
    const { agent, deleteFile } = approvalAgent([
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      textResponse("Deleted."),
    ]);
    const parked = await agent.run("Delete a.txt");

    const thrown = await collect(agent.resumeStream(parked.runId, { decisions: {} })).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(thrown).toBeInstanceOf(ApprovalError);
    expect((thrown as ApprovalError).code).toBe("approval_invalid");
    expect(agent.parkedRunIds()).toEqual([parked.runId]);
    const result = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    expect(result.status).toBe("completed");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
  });
});
