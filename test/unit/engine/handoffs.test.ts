import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  ConfigError,
  HookEvent,
  type Middleware,
  PermissionManager,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { silent } from "../../support/silent.js";

const echoTool = (name: string, seen: string[]) =>
  tool({
    name,
    description: `The ${name} tool.`,
    input: z.object({ text: z.string() }),
    handler: async ({ text }) => {
      seen.push(`${name}:${text}`);
      return text;
    },
  });

describe("handoffs", () => {
  it("continues the same run under the target: its prompt, tools, provider and middleware", async () => {
    const seen: string[] = [];
    const writerModel = new ScriptedProvider([
      toolCallResponse([{ name: "draft", input: { text: "hello" } }]),
      textResponse("Written."),
    ]);
    const tagged: string[] = [];
    const tagging: Partial<Middleware> = {
      async afterToolExecution(result) {
        tagged.push(result.toolCallId);
        return result;
      },
    };
    const writer = new Agent({
      provider: writerModel,
      tools: [echoTool("draft", seen)],
      middleware: [tagging],
      logger: silent,
      config: { name: "writer", systemPrompt: "You write." },
    });
    const leadModel = new ScriptedProvider([
      toolCallResponse([{ name: "transfer_to_writer", input: {}, id: "t1" }]),
    ]);
    const lead = new Agent({
      provider: leadModel,
      tools: [echoTool("search", seen)],
      handoffs: [writer],
      logger: silent,
      config: { name: "lead", systemPrompt: "You lead." },
    });
    const handoffs: Array<{ from: string; to: string; runId: string }> = [];
    lead.hooks.on(HookEvent.HANDOFF, (ctx) => {
      handoffs.push(ctx.data);
    });

    const result = await lead.run("Write a greeting", { runId: "run-h" });

    expect(result.status).toBe("completed");
    expect(result.runId).toBe("run-h");
    expect(result.agent).toBe("writer");
    expect(result.output).toBe("Written.");
    expect(handoffs).toEqual([{ runId: "run-h", from: "lead", to: "writer" }]);
    expect(leadModel.requests[0]?.tools.map((each) => each.name)).toEqual([
      "search",
      "transfer_to_writer",
    ]);
    // The writer sees the whole conversation, with its own system prompt and tools.
    const [first] = writerModel.requests;
    expect(first?.system).toBe("You write.");
    expect(first?.tools.map((each) => each.name)).toEqual(["draft"]);
    expect(first?.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    expect(JSON.stringify(first?.messages[2])).toContain('Transferred to agent \\"writer\\"');
    expect(seen).toEqual(["draft:hello"]);
    // The writer's middleware runs on the writer's tool results only.
    expect(tagged).toEqual(["call_1"]);
    writerModel.assertComplete();
    leadModel.assertComplete();
  });

  it("names the started agent when no handoff happened", async () => {
    const writer = new Agent({ logger: silent, config: { name: "writer" } });
    const lead = new Agent({
      provider: new ScriptedProvider([textResponse("done")]),
      handoffs: [writer],
      logger: silent,
      config: { name: "lead" },
    });
    expect((await lead.run("hi")).agent).toBe("lead");
  });

  it("runs every call of a turn, hands over on the first transfer and refuses the others", async () => {
    const seen: string[] = [];
    const a = new Agent({
      provider: new ScriptedProvider([textResponse("from a")]),
      logger: silent,
      config: { name: "a" },
    });
    const b = new Agent({ logger: silent, config: { name: "b" } });
    const lead = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "search", input: { text: "x" }, id: "s" },
          { name: "transfer_to_a", input: {}, id: "ta" },
          { name: "transfer_to_b", input: {}, id: "tb" },
        ]),
      ]),
      tools: [echoTool("search", seen)],
      handoffs: [a, b],
      logger: silent,
      config: { name: "lead" },
    });
    const result = await lead.run("go");
    expect(result.agent).toBe("a");
    expect(result.output).toBe("from a");
    expect(seen).toEqual(["search:x"]);
    const toolMessage = result.messages[2];
    const results = toolMessage?.content.flatMap((block) =>
      block.type === "tool_result" ? [block] : [],
    );
    expect(results?.map((each) => [each.toolCallId, each.isError])).toEqual([
      ["s", false],
      ["ta", false],
      ["tb", true],
    ]);
    expect(results?.[2]?.content).toContain('already transferred the conversation to "a"');
  });

  it("a denied transfer is an error result and the run stays with its agent", async () => {
    const writer = new Agent({ logger: silent, config: { name: "writer" } });
    const leadModel = new ScriptedProvider([
      toolCallResponse([{ name: "transfer_to_writer", input: {} }]),
      textResponse("I keep it."),
    ]);
    const lead = new Agent({
      provider: leadModel,
      handoffs: [writer],
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "transfer_to_*", decision: "deny" }],
      }),
      logger: silent,
      config: { name: "lead" },
    });
    const result = await lead.run("go");
    expect(result.agent).toBe("lead");
    expect(result.output).toBe("I keep it.");
  });

  it("hands on twice, and the target's structured output is the result", async () => {
    const editor = new Agent({
      provider: new ScriptedProvider([textResponse('{"ok":true}')]),
      logger: silent,
      config: { name: "editor", output: z.object({ ok: z.boolean() }) },
    });
    const writer = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "transfer_to_editor", input: {} }]),
      ]),
      handoffs: [editor],
      logger: silent,
      config: { name: "writer" },
    });
    const lead = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "transfer_to_writer", input: {} }]),
      ]),
      handoffs: [writer],
      logger: silent,
      config: { name: "lead" },
    });
    const result = await lead.run("go");
    expect(result.agent).toBe("editor");
    expect(result.output).toEqual({ ok: true });
  });

  it("resumes a run parked under the target on the agent that started it", async () => {
    const seen: string[] = [];
    const writer = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "publish", input: { text: "post" }, id: "p1" }]),
        textResponse("Published."),
      ]),
      tools: [echoTool("publish", seen)],
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "publish", decision: "ask" }],
      }),
      logger: silent,
      config: { name: "writer" },
    });
    const lead = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "transfer_to_writer", input: {} }]),
      ]),
      handoffs: [writer],
      logger: silent,
      config: { name: "lead" },
    });
    const parked = await lead.run("go");
    expect(parked.status).toBe("awaiting_approval");
    expect(parked.agent).toBe("writer");
    expect(parked.pending.map((each) => each.name)).toEqual(["publish"]);
    const result = await lead.resume(parked.runId, { decisions: { p1: { decision: "allow" } } });
    expect(result.status).toBe("completed");
    expect(result.agent).toBe("writer");
    expect(seen).toEqual(["publish:post"]);
  });

  it("refuses handoffs that are not agents, and two handoffs with one tool name", () => {
    expect(() => new Agent({ handoffs: [{ name: "x" } as unknown as Agent] })).toThrow(ConfigError);
    const one = new Agent({ config: { name: "a b" } });
    const two = new Agent({ config: { name: "a_b" } });
    expect(() => new Agent({ handoffs: [one, two] })).toThrow(/transfer_to_a_b/);
  });
});
