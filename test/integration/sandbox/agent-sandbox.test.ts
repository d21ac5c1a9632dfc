import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  AgentRuntime,
  ConfigError,
  HOOK_PAYLOADS,
  HookEvent,
  memoryBackend,
  Sandbox,
  type SandboxExecData,
  ToolDefinitionError,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { toolResults } from "../../support/messages.js";
import { recordingHooks, scratchFolder } from "./support.js";

const makeAgent = (options: AgentOptions) =>
  new Agent({ logger: pino({ level: "silent" }), ...options });

describe("new Agent({ sandbox })", () => {
  let folder: { path: string; remove: () => Promise<void> };

  beforeAll(async () => {
    folder = await scratchFolder();
  });
  afterAll(async () => {
    await folder.remove();
  });

  it("adds the bash tool, which runs commands in the sandbox and answers exit code and output", async () => {
    const sandbox = new Sandbox({ cwd: folder.path });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "bash", input: { command: "echo hello > greeting.txt; cat greeting.txt" } },
        { name: "bash", input: { command: "echo missing >&2; exit 2" } },
      ]),
      textResponse("Done."),
    ]);
    const agent = makeAgent({ provider, sandbox });
    expect(agent.tools.get("bash")?.inputSchema).toMatchObject({
      type: "object",
      properties: { command: { type: "string" } },
      required: ["command"],
    });
    expect(provider.requests).toEqual([]);

    const result = await agent.run("Write a greeting");
    provider.assertComplete();
    expect(result.status).toBe("completed");
    expect(provider.requests[0]?.tools.map((each) => each.name)).toEqual(["bash"]);
    // A non-zero exit is an answer, not a tool failure: grep and test answer with it too.
    expect(toolResults(result.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content: "exit code: 0\nstdout:\nhello\n",
        isError: false,
      },
      {
        type: "tool_result",
        toolCallId: "call_2",
        content: "exit code: 2\nstderr:\nmissing\n",
        isError: false,
      },
    ]);
    await expect(readFile(join(folder.path, "greeting.txt"), "utf8")).resolves.toBe("hello\n");
  });

  it("gives a timed-out command an error result with what it printed", async () => {
    const sandbox = new Sandbox({ tier: "process", cwd: folder.path, timeoutMs: 2_000 });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "bash", input: { command: "echo started; sleep 60" } }]),
      textResponse("It hung."),
    ]);
    const result = await makeAgent({ provider, sandbox }).run("Run it");
    expect(result.status).toBe("completed");
    expect(toolResults(result.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content:
          "The command timed out after 2000 ms and was killed.\n" +
          "exit code: none (killed by a signal)\nstdout:\nstarted\n",
        isError: true,
      },
    ]);
  });

  it("lends the agent's hooks to a sandbox without hooks: SANDBOX_EXEC with ctx.agent", async () => {
    const sandbox = new Sandbox({ tier: "process", cwd: folder.path });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "bash", input: { command: "exit 7" } }]),
      textResponse("Done."),
    ]);
    const agent = makeAgent({ provider, sandbox });
    const seen: Array<{ data: SandboxExecData; agent: unknown }> = [];
    agent.hooks.on(HookEvent.SANDBOX_EXEC, (context) => {
      seen.push({
        data: HOOK_PAYLOADS[HookEvent.SANDBOX_EXEC].parse(context.data),
        agent: context.agent,
      });
    });
    expect(sandbox.hooks).toBe(agent.hooks);

    await agent.run("Exit 7");
    expect(seen).toEqual([
      {
        data: {
          kind: "command",
          tier: "process",
          exitCode: 7,
          timedOut: false,
          executionTimeMs: expect.any(Number),
        },
        agent,
      },
    ]);
  });

  it("keeps a sandbox's own hooks", async () => {
    const recorded = recordingHooks();
    const sandbox = new Sandbox({ tier: "process", cwd: folder.path }, { hooks: recorded.hooks });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "bash", input: { command: "true" } }]),
      textResponse("Done."),
    ]);
    const agent = makeAgent({ provider, sandbox });
    let agentSaw = 0;
    agent.hooks.on(HookEvent.SANDBOX_EXEC, () => {
      agentSaw += 1;
    });
    await agent.run("Run true");
    expect(sandbox.hooks).toBe(recorded.hooks);
    expect(recorded.events.map((event) => event.exitCode)).toEqual([0]);
    expect(agentSaw).toBe(0);
  });

  it("lends the sandbox to every tool handler as ctx.sandbox", async () => {
    const sandbox = new Sandbox({ tier: "process", cwd: folder.path });
    const calculate = tool({
      name: "calculate",
      description: "Evaluate a Python expression in the sandbox.",
      input: z.object({ expression: z.string() }),
      handler: async ({ expression }, context) => {
        if (context.sandbox === undefined) throw new Error("no sandbox");
        const result = await context.sandbox.execute(`print(${expression})`, {
          language: "python",
        });
        return result.stdout.trim();
      },
    });
    const provider = new ScriptedProvider([
      toolCallResponse([{ name: "calculate", input: { expression: "2 ** 10" } }]),
      textResponse("Done."),
    ]);
    const result = await makeAgent({ provider, sandbox, tools: [calculate] }).run("Compute");
    expect(toolResults(result.messages)).toEqual([
      { type: "tool_result", toolCallId: "call_1", content: "1024", isError: false },
    ]);
  });

  it("runs the bash tool in a durable run (embedded runtime) too", async () => {
    const sandbox = new Sandbox({ tier: "process", cwd: folder.path });
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "bash", input: { command: "echo durable > durable.txt; echo ok" } },
      ]),
      textResponse("Done."),
    ]);
    const agent = makeAgent({ provider, sandbox, config: { name: "shell" } });
    const runtime = new AgentRuntime({
      agents: [agent],
      backend: memoryBackend(),
      logger: pino({ level: "silent" }),
    });
    await runtime.start();
    try {
      const result = await (await runtime.submit("shell", "Write it down")).result();
      expect(result.status).toBe("completed");
      expect(toolResults(result.messages)).toEqual([
        {
          type: "tool_result",
          toolCallId: "call_1",
          content: "exit code: 0\nstdout:\nok\n",
          isError: false,
        },
      ]);
      await expect(readFile(join(folder.path, "durable.txt"), "utf8")).resolves.toBe("durable\n");
    } finally {
      await runtime.close();
    }
  });

  it("adds no tool without a sandbox, and refuses what is not a Sandbox", () => {
    expect(makeAgent({}).tools.has("bash")).toBe(false);
    expect(() => makeAgent({ sandbox: { cwd: "." } as unknown as Sandbox })).toThrow(ConfigError);
  });

  it("refuses a second tool named bash", () => {
    const sandbox = new Sandbox({ tier: "process", cwd: folder.path });
    const bash = tool({
      name: "bash",
      description: "Another bash.",
      input: z.object({ command: z.string() }),
      handler: () => "",
    });
    expect(() => makeAgent({ sandbox, tools: [bash] })).toThrow(ToolDefinitionError);
  });
});
