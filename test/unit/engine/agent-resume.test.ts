import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  ApprovalError,
  HookEvent,
  ParkedRun,
  PermissionManager,
  type ResumeOptions,
  type RunResult,
  tool,
} from "../../../src/index.js";
import { approvalHash } from "../../../src/permissions/input-hash.js";
import {
  ScriptedProvider,
  type ScriptedStep,
  textResponse,
  toolCallResponse,
} from "../../../src/testing.js";
import { type Gate, gate } from "../../support/gate.js";
import { toolResults } from "../../support/messages.js";
import { rejection } from "../../support/rejection.js";
import { silent } from "../../support/silent.js";

/** A `delete_file` tool whose handler records every input; `gate` holds it until released. */
function deleteTool(held?: Gate) {
  const received: Array<{ path: string }> = [];
  const definition = tool({
    name: "delete_file",
    description: "Delete a file.",
    input: z.object({ path: z.string() }),
    handler: async (input) => {
      received.push(input);
      await held?.wait();
      return `deleted ${input.path}`;
    },
  });
  return { tool: definition, received };
}

/** An agent built "the same way" every time: the given tools, an ask rule for deletes. */
function buildAgent(deleteFile: ReturnType<typeof deleteTool>, steps: readonly ScriptedStep[]) {
  const provider = new ScriptedProvider(steps);
  const agent = new Agent({
    provider,
    tools: [deleteFile.tool],
    permissions: new PermissionManager({
      rules: [{ tool: "delete_*", decision: "ask", reason: "destructive" }],
    }),
    logger: silent,
  });
  return { agent, provider };
}

const twoDeletes = () =>
  toolCallResponse([
    { name: "delete_file", input: { path: "a.txt" } },
    { name: "delete_file", input: { path: "b.txt" } },
  ]);

/** A run parked on two asked deletes, `call_1` (a.txt) and `call_2` (b.txt). */
async function parkTwo() {
  const deleteFile = deleteTool();
  const { agent, provider } = buildAgent(deleteFile, [twoDeletes(), textResponse("Done.")]);
  const parked = await agent.run("Delete both");
  expect(parked.status).toBe("awaiting_approval");
  return { agent, provider, deleteFile, runId: parked.runId };
}

function expectApprovalError(error: unknown, code: string): void {
  expect(error).toBeInstanceOf(ApprovalError);
  expect(error).toMatchObject({ name: "ApprovalError", code });
}

/** A JSON copy of parked data, as another process would read it back. */
const jsonCopy = (parked: ParkedRun): ParkedRun => JSON.parse(JSON.stringify(parked)) as ParkedRun;

/** The run-machine context inside a parked snapshot, as far as these tests touch it. */
interface CallsContext {
  calls: Array<{ call: { id: string; name: string; input: Record<string, unknown> } }>;
}
const callsOf = (parked: ParkedRun): CallsContext["calls"] =>
  (parked.snapshot.context as CallsContext).calls;

describe("resume errors change nothing", () => {
  type Attempt = (agent: Agent, runId: string) => Promise<RunResult>;
  const cases: Array<[string, string, Attempt]> = [
    [
      "an unknown run id",
      "run_not_found",
      (agent) => agent.resume("no-such-run", { decisions: { call_1: "allow" } }),
    ],
    [
      "an unknown call id",
      "tool_call_not_found",
      (agent, runId) => agent.resume(runId, { decisions: { call_9: "allow" } }),
    ],
    [
      "an unknown call id next to a valid decision",
      "tool_call_not_found",
      (agent, runId) => agent.resume(runId, { decisions: { call_1: "allow", call_9: "allow" } }),
    ],
    ["no decisions", "approval_invalid", (agent, runId) => agent.resume(runId, { decisions: {} })],
    [
      "a decision that is neither allow nor deny",
      "approval_invalid",
      (agent, runId) =>
        agent.resume(runId, {
          decisions: { call_1: "maybe" },
        } as unknown as ResumeOptions),
    ],
    [
      "parked data with an unknown schema version",
      "approval_invalid",
      (agent, runId) =>
        agent.resume(
          { ...jsonCopy(agent.parked(runId)), schemaVersion: 3 } as unknown as ParkedRun,
          {
            decisions: { call_1: "allow" },
          },
        ),
    ],
    [
      "parked data without its pending list",
      "approval_invalid",
      (agent, runId) => {
        const { pending: _dropped, ...rest } = jsonCopy(agent.parked(runId));
        return agent.resume(rest as unknown as ParkedRun, { decisions: { call_1: "allow" } });
      },
    ],
    [
      "parked data whose snapshot is not waiting for approval",
      "approval_invalid",
      (agent, runId) => {
        const copy = jsonCopy(agent.parked(runId));
        const snapshot = { ...copy.snapshot, value: "dispatch" };
        return agent.resume({ ...copy, snapshot } as unknown as ParkedRun, {
          decisions: { call_1: "allow" },
        });
      },
    ],
    [
      "an empty object as parked data",
      "approval_invalid",
      (agent) => agent.resume({} as unknown as ParkedRun, { decisions: { call_1: "allow" } }),
    ],
  ];

  it.each(cases)(
    "%s → %s; the run still resumes correctly afterwards",
    async (_label, code, attempt) => {
      const { agent, provider, deleteFile, runId } = await parkTwo();
      const before = agent.parked(runId);

      expectApprovalError(await rejection(attempt(agent, runId)), code);

      expect(agent.parkedRunIds()).toEqual([runId]);
      expect(agent.parked(runId)).toEqual(before);
      expect(deleteFile.received).toEqual([]);
      expect(provider.callCount).toBe(1);

      const result = await agent.resume(runId, {
        decisions: { call_1: "deny", call_2: "allow" },
      });

      expect(result.status).toBe("completed");
      expect(deleteFile.received).toEqual([{ path: "b.txt" }]);
      expect(toolResults(result.messages).map((each) => each.isError)).toEqual([true, false]);
      provider.assertComplete();
    },
  );

  it("deciding an already decided call → already_decided; the other call's decision in the same request is not applied", async () => {
    const { agent, provider, deleteFile, runId } = await parkTwo();
    const partial = await agent.resume(runId, { decisions: { call_1: "allow" } });
    expect(partial.status).toBe("awaiting_approval");
    const before = agent.parked(runId);

    expectApprovalError(
      await rejection(agent.resume(runId, { decisions: { call_1: "deny" } })),
      "already_decided",
    );
    expectApprovalError(
      await rejection(agent.resume(runId, { decisions: { call_2: "allow", call_1: "deny" } })),
      "already_decided",
    );

    expect(agent.parked(runId)).toEqual(before);
    expect(agent.parked(runId).pending.map((each) => each.toolCallId)).toEqual(["call_2"]);
    expect(deleteFile.received).toEqual([]);

    const result = await agent.resume(runId, { decisions: { call_2: "deny" } });

    expect(result.status).toBe("completed");
    // The first decision (allow) stands; the refused "deny" changed nothing.
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    expect(toolResults(result.messages).map((each) => each.isError)).toEqual([false, true]);
    provider.assertComplete();
  });

  it("a finished run can no longer be resumed or read by id", async () => {
    const { agent, runId } = await parkTwo();
    await agent.resume(runId, { decisions: { call_1: "allow", call_2: "allow" } });

    expectApprovalError(
      await rejection(agent.resume(runId, { decisions: { call_1: "allow" } })),
      "run_not_found",
    );
    let thrown: unknown;
    try {
      agent.parked(runId);
    } catch (error) {
      thrown = error;
    }
    expectApprovalError(thrown, "run_not_found");
    expect(agent.parkedRunIds()).toEqual([]);
  });
});

describe("tampered parked data is refused", () => {
  const tamperings: Array<[string, (copy: ParkedRun) => void]> = [
    [
      "the pending input",
      (copy) => {
        const [first] = copy.pending;
        if (first) first.input = { path: "/etc/passwd" };
      },
    ],
    [
      "the pending tool name",
      (copy) => {
        const [first] = copy.pending;
        if (first) first.name = "delete_everything";
      },
    ],
    [
      "the input of the call inside snapshot.context.calls",
      (copy) => {
        const [first] = callsOf(copy);
        if (first) first.call.input = { path: "/etc/passwd" };
      },
    ],
    [
      "both copies of the input, consistently",
      (copy) => {
        const [pending] = copy.pending;
        const [state] = callsOf(copy);
        if (pending) pending.input = { path: "/etc/passwd" };
        if (state) state.call.input = { path: "/etc/passwd" };
      },
    ],
  ];

  it.each(tamperings)(
    "altering %s → approval_tampered; the untampered copy still resumes",
    async (_label, tamper) => {
      const deleteFile = deleteTool();
      const { agent, provider } = buildAgent(deleteFile, [
        toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
        textResponse("Deleted."),
      ]);
      const parked = await agent.run("Delete a.txt");
      const original = jsonCopy(agent.parked(parked.runId));
      const tampered = jsonCopy(original);
      tamper(tampered);
      expect(tampered).not.toEqual(original);

      expectApprovalError(
        await rejection(agent.resume(tampered, { decisions: { call_1: "allow" } })),
        "approval_tampered",
      );
      expect(deleteFile.received).toEqual([]);
      expect(provider.callCount).toBe(1);
      expect(agent.parkedRunIds()).toEqual([parked.runId]);

      const result = await agent.resume(original, { decisions: { call_1: "allow" } });

      expect(result.status).toBe("completed");
      expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
      provider.assertComplete();
    },
  );
});

describe("a parked run is data", () => {
  it("survives a JSON round trip unchanged and parses as ParkedRun", async () => {
    const { agent, runId } = await parkTwo();
    const parked = agent.parked(runId);

    expect(JSON.parse(JSON.stringify(parked))).toEqual(parked);
    expect(ParkedRun.parse(jsonCopy(parked))).toEqual(parked);
    expect(parked.runId).toBe(runId);
    expect(parked.pending.map(({ inputHash: _hash, ...pending }) => pending)).toEqual([
      {
        toolCallId: "call_1",
        name: "delete_file",
        input: { path: "a.txt" },
        reason: "destructive",
      },
      {
        toolCallId: "call_2",
        name: "delete_file",
        input: { path: "b.txt" },
        reason: "destructive",
      },
    ]);
    // A copy, not the agent's own record.
    expect(agent.parked(runId)).not.toBe(parked);
  });

  it("a new agent built the same way resumes it; the handler runs exactly once", async () => {
    const deleteFile = deleteTool();
    const first = buildAgent(deleteFile, [
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }], {
        text: "Deleting.",
      }),
    ]);
    const parked = await first.agent.run("Delete a.txt", { sessionId: "session-7" });
    expect(parked.status).toBe("awaiting_approval");
    const stored = JSON.stringify(first.agent.parked(parked.runId));

    const second = buildAgent(deleteFile, [textResponse("Deleted a.txt.")]);
    const starts: string[] = [];
    const ends: RunResult[] = [];
    second.agent.hooks.on(HookEvent.AGENT_START, (context) => {
      starts.push(context.data.runId);
    });
    second.agent.hooks.on(HookEvent.AGENT_END, (context) => {
      ends.push(context.data.result);
    });

    const result = await second.agent.resume(JSON.parse(stored) as ParkedRun, {
      decisions: { call_1: { decision: "allow", reason: "ok", by: "reviewer-2" } },
    });

    expect(result.status).toBe("completed");
    expect(result.output).toBe("Deleted a.txt.");
    expect(result.runId).toBe(parked.runId);
    expect(result.sessionId).toBe("session-7");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    // The new provider continues the conversation where the first one stopped.
    expect(second.provider.requests[0]?.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Delete a.txt" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Deleting." },
          { type: "tool_use", id: "call_1", name: "delete_file", input: { path: "a.txt" } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool_result", toolCallId: "call_1", content: "deleted a.txt", isError: false },
        ],
      },
    ]);
    expect(first.provider.callCount).toBe(1);
    first.provider.assertComplete();
    second.provider.assertComplete();
    expect(starts).toEqual([]);
    expect(ends).toEqual([result]);
    expect(second.agent.parkedRunIds()).toEqual([]);
  });

  it("a partial decision on another agent parks the run there, with the rest pending", async () => {
    const deleteFile = deleteTool();
    const first = buildAgent(deleteFile, [twoDeletes()]);
    const parked = await first.agent.run("Delete both");
    const stored = jsonCopy(first.agent.parked(parked.runId));

    const second = buildAgent(deleteFile, [textResponse("Done.")]);
    const partial = await second.agent.resume(stored, { decisions: { call_2: "allow" } });

    expect(partial.status).toBe("awaiting_approval");
    expect(partial.pending.map((each) => each.toolCallId)).toEqual(["call_1"]);
    expect(second.agent.parkedRunIds()).toEqual([parked.runId]);
    expect(deleteFile.received).toEqual([]);

    const result = await second.agent.resume(parked.runId, { decisions: { call_1: "deny" } });

    expect(result.status).toBe("completed");
    expect(deleteFile.received).toEqual([{ path: "b.txt" }]);
    second.provider.assertComplete();
  });
});

describe("a parked run of version 1", () => {
  it("keeps its conversation in the snapshot; it still resumes, the conversation carried on", async () => {
    const deleteFile = deleteTool();
    const first = buildAgent(deleteFile, [
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
    ]);
    const parked = await first.agent.run("Delete a.txt");
    const current = jsonCopy(first.agent.parked(parked.runId));
    expect(current.schemaVersion).toBe(2);
    expect(current.snapshot.context).not.toHaveProperty("messages");
    // Version 1: the conversation inside the machine's context, no count, no list beside it.
    const { messages, ...rest } = current;
    const { messageCount: _count, ...position } = current.snapshot.context as Record<
      string,
      unknown
    >;
    const version1 = {
      ...rest,
      schemaVersion: 1,
      snapshot: { ...current.snapshot, context: { ...position, messages } },
    };

    const second = buildAgent(deleteFile, [textResponse("Deleted a.txt.")]);
    const result = await second.agent.resume(version1 as unknown as ParkedRun, {
      decisions: { call_1: "allow" },
    });
    expect(result.status).toBe("completed");
    expect(result.messages.slice(0, 2)).toEqual(messages);
    expect(result.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(second.provider.requests[0]?.messages.slice(0, 2)).toEqual(messages);
  });
});

describe("concurrent resumes of one run", () => {
  it("two resumes started together: exactly one succeeds, the other is refused, the handler runs once", async () => {
    const deleteFile = deleteTool();
    const { agent, provider } = buildAgent(deleteFile, [
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      textResponse("Deleted."),
    ]);
    const parked = await agent.run("Delete a.txt");
    const decisions = { decisions: { call_1: "allow" as const } };

    const outcomes = await Promise.allSettled([
      agent.resume(parked.runId, decisions),
      agent.resume(parked.runId, decisions),
    ]);

    const fulfilled = outcomes.flatMap((each) => (each.status === "fulfilled" ? [each.value] : []));
    const rejected = outcomes.flatMap((each): unknown[] =>
      each.status === "rejected" ? [each.reason] : [],
    );
    expect(fulfilled.map((each) => each.status)).toEqual(["completed"]);
    expect(rejected).toHaveLength(1);
    expectApprovalError(rejected[0], "already_decided");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    expect(agent.parkedRunIds()).toEqual([]);
    provider.assertComplete();
  });

  it("a resume arriving while the first is inside the handler is refused", async () => {
    const inHandler = gate();
    const deleteFile = deleteTool(inHandler);
    const { agent, provider } = buildAgent(deleteFile, [
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      textResponse("Deleted."),
    ]);
    const parked = await agent.run("Delete a.txt");

    const winner = agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    await inHandler.entered;
    const loser = agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    inHandler.open();
    const [won, lost] = await Promise.allSettled([winner, loser]);

    expect(won?.status).toBe("fulfilled");
    expect(won?.status === "fulfilled" ? won.value.status : undefined).toBe("completed");
    expect(lost?.status).toBe("rejected");
    expectApprovalError(lost?.status === "rejected" ? lost.reason : undefined, "already_decided");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    provider.assertComplete();
  });
});

describe("copies of parked data on the agent that parked the run", () => {
  it("a copy racing a resume by id is refused; the handler runs once", async () => {
    const deleteFile = deleteTool();
    const { agent, provider } = buildAgent(deleteFile, [
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
      textResponse("Deleted."),
    ]);
    const parked = await agent.run("Delete a.txt");
    const copy = JSON.parse(JSON.stringify(agent.parked(parked.runId))) as ParkedRun;

    const outcomes = await Promise.allSettled([
      agent.resume(parked.runId, { decisions: { call_1: "allow" } }),
      agent.resume(copy, { decisions: { call_1: "allow" } }),
    ]);

    expect(outcomes.map((each) => each.status)).toEqual(["fulfilled", "rejected"]);
    expectApprovalError(
      outcomes[1]?.status === "rejected" ? outcomes[1].reason : undefined,
      "already_decided",
    );
    expect(deleteFile.received).toEqual([{ path: "a.txt" }]);
    provider.assertComplete();
  });

  it("a stale copy cannot replay a decision the agent already applied", async () => {
    const deleteFile = deleteTool();
    const { agent } = buildAgent(deleteFile, [
      toolCallResponse([
        { name: "delete_file", input: { path: "a.txt" } },
        { name: "delete_file", input: { path: "b.txt" } },
      ]),
      textResponse("Done."),
    ]);
    const parked = await agent.run("Delete both");
    const stale = JSON.parse(JSON.stringify(agent.parked(parked.runId))) as ParkedRun;
    const partial = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    expect(partial.status).toBe("awaiting_approval");

    await expect(agent.resume(stale, { decisions: { call_1: "deny" } })).rejects.toMatchObject({
      code: "already_decided",
    });
    expect(deleteFile.received).toEqual([]);
    const finished = await agent.resume(stale, { decisions: { call_2: "allow" } });
    expect(finished.status).toBe("completed");
    expect(deleteFile.received).toEqual([{ path: "a.txt" }, { path: "b.txt" }]);
  });

  it("is refused by an agent of another name", async () => {
    const deleteFile = deleteTool();
    const { agent } = buildAgent(deleteFile, [
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
    ]);
    const parked = await agent.run("Delete a.txt");
    const other = new Agent({
      provider: new ScriptedProvider([]),
      tools: [deleteFile.tool],
      config: { name: "someone-else" },
      permissions: new PermissionManager({ rules: [{ tool: "delete_*", decision: "ask" }] }),
      logger: pino({ level: "silent" }),
    });
    await expect(
      other.resume(agent.parked(parked.runId), { decisions: { call_1: "allow" } }),
    ).rejects.toMatchObject({ code: "approval_invalid" });
    expect(deleteFile.received).toEqual([]);
  });
});

describe("approvalKey", () => {
  const keyed = (approvalKey: string, steps: readonly ScriptedStep[]) => {
    const deleteFile = deleteTool();
    const agent = new Agent({
      provider: new ScriptedProvider(steps),
      tools: [deleteFile.tool],
      permissions: new PermissionManager({ rules: [{ tool: "delete_*", decision: "ask" }] }),
      logger: pino({ level: "silent" }),
      approvalKey,
    });
    return { agent, deleteFile };
  };

  it("an edit with a recomputed unkeyed hash is refused; the same key resumes elsewhere", async () => {
    const first = keyed("s3cret", [
      toolCallResponse([{ name: "delete_file", input: { path: "a.txt" } }]),
    ]);
    const parked = await first.agent.run("Delete a.txt");
    const data = first.agent.parked(parked.runId);

    const forged = JSON.parse(JSON.stringify(data)) as ParkedRun;
    const call = { id: "call_1", name: "delete_file", input: { path: "/etc/passwd" } };
    const context = forged.snapshot.context as {
      calls: Array<{ call: typeof call; inputHash: string }>;
    };
    const forgedHash = approvalHash(forged.runId, call);
    context.calls[0] = {
      ...context.calls[0],
      call,
      inputHash: forgedHash,
    } as (typeof context.calls)[0];
    forged.pending[0] = {
      ...(forged.pending[0] as ParkedRun["pending"][0]),
      input: call.input,
      inputHash: forgedHash,
    };

    const second = keyed("s3cret", [textResponse("Deleted.")]);
    await expect(
      second.agent.resume(forged, { decisions: { call_1: "allow" } }),
    ).rejects.toMatchObject({
      code: "approval_tampered",
    });
    expect(second.deleteFile.received).toEqual([]);

    const wrongKey = keyed("other", [textResponse("Deleted.")]);
    await expect(
      wrongKey.agent.resume(data, { decisions: { call_1: "allow" } }),
    ).rejects.toMatchObject({
      code: "approval_tampered",
    });

    const result = await second.agent.resume(data, { decisions: { call_1: "allow" } });
    expect(result.status).toBe("completed");
    expect(second.deleteFile.received).toEqual([{ path: "a.txt" }]);
  });
});
