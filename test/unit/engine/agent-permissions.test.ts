import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  HookEvent,
  Middleware,
  type PermissionDecision,
  PermissionManager,
  type PermissionRule,
  type RunResult,
  type ToolCall,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { toolResults } from "../../support/messages.js";
import { countingTool } from "../../support/path-tool.js";
import { silent } from "../../support/silent.js";

/** A `shell` tool whose handler records every command it runs. */
function shellTool() {
  const received: string[] = [];
  const definition = tool({
    name: "shell",
    description: "Run a shell command.",
    input: z.object({ command: z.string() }),
    handler: async ({ command }) => {
      received.push(command);
      return `ran ${command}`;
    },
  });
  return { tool: definition, received };
}

describe("each permission decision through the agent", () => {
  it("allow: the handler runs and the run completes with its result in memory", async () => {
    const readFile = countingTool("read_file");
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "read_file", input: { path: "notes.txt" } }]),
      textResponse("Here are your notes."),
    ]);
    const agent = new Agent({
      provider,
      tools: [readFile.tool],
      permissions: new PermissionManager({
        default: "deny",
        rules: [{ tool: "read_file", decision: "allow" }],
      }),
      logger: silent,
    });

    const result = await agent.run("Read my notes");

    expect(result.status).toBe("completed");
    expect(result.output).toBe("Here are your notes.");
    expect(result.pending).toEqual([]);
    expect(readFile.received).toEqual([{ path: "notes.txt" }]);
    expect(toolResults(result.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content: "read_file done: notes.txt",
        isError: false,
      },
    ]);
    expect(provider.callCount).toBe(2);
    provider.assertComplete();
  });

  it("deny: no handler, an error result the model sees, and the run goes on to completion", async () => {
    const deleteFile = countingTool("delete_file");
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "delete_file", input: { path: "/etc/hosts" } }]),
      textResponse("I was not allowed to delete it."),
    ]);
    const agent = new Agent({
      provider,
      tools: [deleteFile.tool],
      permissions: new PermissionManager({
        rules: [{ tool: "delete_file", decision: "deny", reason: "deleting is forbidden" }],
      }),
      logger: silent,
    });
    const started: ToolCall[] = [];
    agent.hooks.beforeTool((context) => {
      started.push(context.data.toolCall);
    });

    const result = await agent.run("Delete /etc/hosts");

    expect(result.status).toBe("completed");
    expect(result.output).toBe("I was not allowed to delete it.");
    expect(result.pending).toEqual([]);
    expect(deleteFile.received).toEqual([]);
    expect(started).toEqual([]);
    const denied = {
      type: "tool_result",
      toolCallId: "call_1",
      content: "Permission denied: deleting is forbidden",
      isError: true,
    };
    expect(toolResults(result.messages)).toEqual([denied]);
    // The model saw the denial in its next request.
    const seen = provider.requests[1]?.messages.at(-1);
    expect(seen).toEqual({ role: "tool", content: [denied] });
    provider.assertComplete();
  });

  it("deny by default: a call no rule matches is denied when the default is deny", async () => {
    const readFile = countingTool("read_file");
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "read_file", input: { path: "a.txt" } }]),
      textResponse("Denied."),
    ]);
    const agent = new Agent({
      provider,
      tools: [readFile.tool],
      permissions: new PermissionManager({ default: "deny" }),
      logger: silent,
    });

    const result = await agent.run("Read a.txt");

    expect(result.status).toBe("completed");
    expect(readFile.received).toEqual([]);
    const [only] = toolResults(result.messages);
    expect(only?.isError).toBe(true);
    expect(only?.content).toMatch(/^Permission denied: /);
  });

  it("ask: the run parks with the undecided call pending; nothing runs and the model is not called again", async () => {
    const deleteFile = countingTool("delete_file");
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "delete_file", input: { path: "/tmp/report.csv" } }], {
        text: "I will delete it.",
      }),
    ]);
    const agent = new Agent({
      provider,
      tools: [deleteFile.tool],
      permissions: new PermissionManager({
        rules: [{ tool: "delete_file", decision: "ask", reason: "deleting needs a person" }],
      }),
      logger: silent,
    });

    const result = await agent.run("Delete the report");

    expect(result.status).toBe("awaiting_approval");
    expect(result.pending).toEqual([
      {
        toolCallId: "call_1",
        name: "delete_file",
        input: { path: "/tmp/report.csv" },
        reason: "deleting needs a person",
      },
    ]);
    expect(result.output).toBeNull();
    expect(result.error).toBeNull();
    expect(result.iterations).toBe(1);
    expect(deleteFile.received).toEqual([]);
    expect(provider.callCount).toBe(1);
    expect(agent.parkedRunIds()).toEqual([result.runId]);
    // Memory holds the model's request, and no tool result yet.
    expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(toolResults(result.messages)).toEqual([]);
  });

  it("ask without a rule reason: the pending reason still names the rule", async () => {
    const deleteFile = countingTool("delete_file");
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "delete_file", input: { path: "x" } }]),
      ]),
      tools: [deleteFile.tool],
      permissions: new PermissionManager({ rules: [{ tool: "delete_*", decision: "ask" }] }),
      logger: silent,
    });

    const result = await agent.run("Delete x");

    expect(result.status).toBe("awaiting_approval");
    expect(result.pending).toHaveLength(1);
    expect(result.pending[0]?.reason).toContain("delete_*");
  });

  it("a custom resolver decides instead of the rules", async () => {
    const deleteFile = countingTool("delete_file");
    const readFile = countingTool("read_file");
    const seen: string[] = [];
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "read_file", input: { path: "a" } },
          { name: "delete_file", input: { path: "b" } },
        ]),
      ]),
      tools: [deleteFile.tool, readFile.tool],
      permissions: new PermissionManager({
        // Rules are ignored when a resolver is given.
        rules: [{ tool: "*", decision: "deny" }],
        resolver: async (call) => {
          seen.push(call.name);
          return call.name.startsWith("delete_")
            ? { decision: "ask", reason: "resolver asks for deletes" }
            : "allow";
        },
      }),
      logger: silent,
    });

    const result = await agent.run("Tidy up");

    expect(seen.sort()).toEqual(["delete_file", "read_file"]);
    expect(result.status).toBe("awaiting_approval");
    expect(result.pending).toEqual([
      {
        toolCallId: "call_2",
        name: "delete_file",
        input: { path: "b" },
        reason: "resolver asks for deletes",
      },
    ]);
    // The allowed call of the same response waits with the batch: nothing ran yet.
    expect(readFile.received).toEqual([]);
    expect(deleteFile.received).toEqual([]);
  });
});

describe("globs and `when` predicates through the agent", () => {
  it("`delete_*` asks for every delete tool and nothing else", async () => {
    const deleteFile = countingTool("delete_file");
    const deleteUser = countingTool("delete_user");
    const undelete = countingTool("undelete_file");
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "delete_file", input: { path: "a" } },
        { name: "undelete_file", input: { path: "b" } },
        { name: "delete_user", input: { path: "c" } },
      ]),
      textResponse("Done."),
    ]);
    const agent = new Agent({
      provider,
      tools: [deleteFile.tool, deleteUser.tool, undelete.tool],
      permissions: new PermissionManager({
        rules: [{ tool: "delete_*", decision: "ask", reason: "destructive" }],
      }),
      logger: silent,
    });

    const parked = await agent.run("Clean up");

    expect(parked.status).toBe("awaiting_approval");
    expect(parked.pending).toEqual([
      { toolCallId: "call_1", name: "delete_file", input: { path: "a" }, reason: "destructive" },
      { toolCallId: "call_3", name: "delete_user", input: { path: "c" }, reason: "destructive" },
    ]);
    expect(undelete.received).toEqual([]);

    const finished = await agent.resume(parked.runId, {
      decisions: { call_1: "allow", call_3: "allow" },
    });

    expect(finished.status).toBe("completed");
    expect(deleteFile.received).toEqual([{ path: "a" }]);
    expect(undelete.received).toEqual([{ path: "b" }]);
    expect(deleteUser.received).toEqual([{ path: "c" }]);
    provider.assertComplete();
  });

  it("`?` matches exactly one character of the name", async () => {
    const log1 = countingTool("log1");
    const log12 = countingTool("log12");
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "log1", input: { path: "a" } },
          { name: "log12", input: { path: "b" } },
        ]),
        textResponse("ok"),
      ]),
      tools: [log1.tool, log12.tool],
      permissions: new PermissionManager({ rules: [{ tool: "log?", decision: "deny" }] }),
      logger: silent,
    });

    const result = await agent.run("log");

    expect(result.status).toBe("completed");
    expect(log1.received).toEqual([]);
    expect(log12.received).toEqual([{ path: "b" }]);
  });

  it("`shell` is denied only when its input matches the `when` predicate", async () => {
    const shell = shellTool();
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "shell", input: { command: "ls -la" } },
        { name: "shell", input: { command: "rm -rf /" } },
      ]),
      textResponse("Listed, but not removed."),
    ]);
    const agent = new Agent({
      provider,
      tools: [shell.tool],
      permissions: new PermissionManager({
        default: "allow",
        rules: [
          {
            tool: "shell",
            when: (call) => String(call.input.command).startsWith("rm "),
            decision: "deny",
            reason: "no removals",
          },
        ],
      }),
      logger: silent,
    });

    const result = await agent.run("List and remove");

    expect(result.status).toBe("completed");
    expect(shell.received).toEqual(["ls -la"]);
    expect(toolResults(result.messages)).toEqual([
      { type: "tool_result", toolCallId: "call_1", content: "ran ls -la", isError: false },
      {
        type: "tool_result",
        toolCallId: "call_2",
        content: "Permission denied: no removals",
        isError: true,
      },
    ]);
  });

  it("a `when` predicate sees the call the middleware returned", async () => {
    const shell = shellTool();
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "shell", input: { command: "ls" } }]),
        textResponse("ok"),
      ]),
      tools: [shell.tool],
      middleware: [
        {
          beforeToolExecution: async (call: ToolCall) => ({
            ...call,
            input: { ...call.input, command: `rm ${String(call.input.command)}` },
          }),
        },
      ],
      permissions: new PermissionManager({
        rules: [
          {
            tool: "shell",
            when: (call) => String(call.input.command).startsWith("rm "),
            decision: "deny",
          },
        ],
      }),
      logger: silent,
    });

    const result = await agent.run("ls");

    expect(shell.received).toEqual([]);
    expect(toolResults(result.messages)[0]?.content).toMatch(/^Permission denied: /);
  });

  it("a `when` predicate that throws denies the call", async () => {
    const shell = shellTool();
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "shell", input: { command: "ls" } }]),
        textResponse("ok"),
      ]),
      tools: [shell.tool],
      permissions: new PermissionManager({
        rules: [
          {
            tool: "shell",
            when: () => {
              throw new Error("predicate broke");
            },
            decision: "allow",
          },
        ],
      }),
      logger: silent,
    });

    const result = await agent.run("ls");

    expect(result.status).toBe("completed");
    expect(shell.received).toEqual([]);
    const [only] = toolResults(result.messages);
    expect(only?.isError).toBe(true);
    expect(only?.content).toContain("predicate broke");
  });
});

describe("the strictest matching rule wins, whatever the order", () => {
  const allowAll: PermissionRule = { tool: "*", decision: "allow", reason: "everything" };
  const allowShell: PermissionRule = { tool: "shell", decision: "allow", reason: "shell ok" };
  const denyShell: PermissionRule = { tool: "shell", decision: "deny", reason: "no shell" };
  const askShell: PermissionRule = { tool: "sh*", decision: "ask", reason: "ask for shell" };

  async function runShell(rules: PermissionRule[], fallback: PermissionDecision) {
    const shell = shellTool();
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "shell", input: { command: "ls" } }]),
        textResponse("ok"),
      ]),
      tools: [shell.tool],
      permissions: new PermissionManager({ default: fallback, rules }),
      logger: silent,
    });
    const result: RunResult = await agent.run("ls");
    return { result, shell };
  }

  it.each([
    ["allow then deny", [allowShell, denyShell]],
    ["deny then allow", [denyShell, allowShell]],
    ["glob allow then deny", [allowAll, denyShell]],
    ["deny then glob allow", [denyShell, allowAll]],
    ["ask, allow, deny", [askShell, allowShell, denyShell]],
    ["deny, ask, allow", [denyShell, askShell, allowShell]],
  ])("deny wins: %s", async (_label, rules) => {
    const { result, shell } = await runShell(rules, "allow");

    expect(result.status).toBe("completed");
    expect(shell.received).toEqual([]);
    expect(toolResults(result.messages)[0]?.content).toBe("Permission denied: no shell");
  });

  it.each([
    ["allow then ask", [allowShell, askShell]],
    ["ask then allow", [askShell, allowShell]],
  ])("ask beats allow: %s", async (_label, rules) => {
    const { result, shell } = await runShell(rules, "allow");

    expect(result.status).toBe("awaiting_approval");
    expect(result.pending.map((each) => each.reason)).toEqual(["ask for shell"]);
    expect(shell.received).toEqual([]);
  });

  it("a matching allow rule overrides a deny default", async () => {
    const { result, shell } = await runShell([allowShell], "deny");

    expect(result.status).toBe("completed");
    expect(shell.received).toEqual(["ls"]);
  });
});

describe("middleware exceptions are failures, never approval requests", () => {
  it("beforeToolExecution throwing on a tool with an ask rule fails the run", async () => {
    const deleteFile = countingTool("delete_file");
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "delete_file", input: { path: "a" } }]),
    ]);
    class Explodes extends Middleware {
      override async beforeToolExecution(): Promise<ToolCall> {
        throw new Error("inspection failed");
      }
    }
    const agent = new Agent({
      provider,
      tools: [deleteFile.tool],
      middleware: [new Explodes()],
      permissions: new PermissionManager({ rules: [{ tool: "delete_file", decision: "ask" }] }),
      logger: silent,
    });
    const ended: RunResult[] = [];
    agent.hooks.on(HookEvent.AGENT_END, (context) => {
      ended.push(context.data.result);
    });

    const result = await agent.run("Delete a");

    expect(result.status).toBe("failed");
    expect(result.pending).toEqual([]);
    expect(result.error?.name).toBe("MiddlewareError");
    expect(result.error?.message).toContain("inspection failed");
    expect(deleteFile.received).toEqual([]);
    expect(agent.parkedRunIds()).toEqual([]);
    expect(ended.map((each) => each.status)).toEqual(["failed"]);
    expect(provider.callCount).toBe(1);
  });

  it("afterToolExecution throwing after an approval fails the resumed run", async () => {
    const deleteFile = countingTool("delete_file");
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "delete_file", input: { path: "a" } }]),
      ]),
      tools: [deleteFile.tool],
      middleware: [
        {
          afterToolExecution: async () => {
            throw new Error("redaction failed");
          },
        },
      ],
      permissions: new PermissionManager({ rules: [{ tool: "delete_file", decision: "ask" }] }),
      logger: silent,
    });

    const parked = await agent.run("Delete a");
    expect(parked.status).toBe("awaiting_approval");

    const result = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });

    expect(result.status).toBe("failed");
    expect(result.pending).toEqual([]);
    expect(result.error?.name).toBe("MiddlewareError");
    expect(result.error?.message).toContain("redaction failed");
    expect(deleteFile.received).toEqual([{ path: "a" }]);
    expect(agent.parkedRunIds()).toEqual([]);
  });
});
