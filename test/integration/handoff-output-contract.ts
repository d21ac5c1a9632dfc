import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  AgentRuntime,
  HookEvent,
  PermissionManager,
  type ProviderResponse,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import type { BackendFactory } from "./backend-contract.js";
import { silent } from "./fixtures.js";

// Handoffs and structured output on a durable runtime (SPEC §14): the stored result keeps the
// parsed value, a handoff moves the run (and its tool jobs) to the target agent, and a run
// parked under the target resumes under it, in another runtime too.

const Answer = z.object({ title: z.string(), words: z.number().int() });

const model = (steps: readonly ProviderResponse[]) => new ScriptedProvider(steps);

const agent = <T = string>(name: string, options: AgentOptions<T> = {}) =>
  new Agent<T>({ logger: silent, ...options, config: { name, ...options.config } });

function publishTool(published: string[]) {
  return tool({
    name: "publish",
    description: "Publishes a post.",
    input: z.object({ text: z.string() }),
    handler: async ({ text }) => {
      published.push(text);
      return `published ${text}`;
    },
  });
}

export function describeHandoffOutputContract(name: string, factory: BackendFactory): void {
  describe(`handoffs and structured output on ${name}`, () => {
    const open: AgentRuntime[] = [];
    const start = async (agents: readonly Agent<unknown>[], backend = factory.create()) => {
      const runtime = new AgentRuntime({ agents, backend, logger: silent, concurrency: 4 });
      open.push(runtime);
      await runtime.start();
      return { runtime, backend };
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((runtime) => runtime.close({ timeoutMs: 5000 })));
      await factory.cleanup();
    });

    it("stores the parsed structured output, after sending an invalid answer back", async () => {
      const provider = model([
        textResponse('{"title":"Cats"}'),
        textResponse('{"title":"Cats","words":3}'),
      ]);
      const writer = agent("writer", { provider, config: { output: Answer } });
      const { runtime } = await start([writer]);
      const handle = await runtime.submit("writer", "Write about cats");
      const result = await handle.result();
      expect(result.status).toBe("completed");
      expect(result.output).toEqual({ title: "Cats", words: 3 });
      expect(result.agent).toBe("writer");
      expect(provider.requests[0]?.output?.name).toBe("final_output");
      // Read back from the store, not from the worker's memory.
      const stored = await runtime.handle(handle.runId).record();
      expect(stored.result?.output).toEqual({ title: "Cats", words: 3 });
      const detail = await runtime.get(handle.runId);
      expect(detail.messages.at(-2)?.role).toBe("user");
    });

    it("fails a run with output_invalid once the retries are spent", async () => {
      const writer = agent("writer", {
        provider: model([textResponse("no json")]),
        config: { output: Answer, outputRetries: 0 },
      });
      const { runtime } = await start([writer]);
      const result = await (await runtime.submit("writer", "go")).result();
      expect(result.status).toBe("failed");
      expect(result.error?.code).toBe("output_invalid");
      const page = await runtime.list({ status: "failed" });
      expect(page.runs.map((run) => run.error?.code)).toEqual(["output_invalid"]);
    });

    it("hands a run over: the target's tools run on tool jobs, the summary keeps the submitted agent", async () => {
      const published: string[] = [];
      const writer = agent("writer", {
        provider: model([
          toolCallResponse([{ name: "publish", input: { text: "post" } }]),
          textResponse('{"title":"Post","words":1}'),
        ]),
        tools: [publishTool(published)],
        config: { output: Answer },
      });
      const handoffs: string[] = [];
      const lead = agent("lead", {
        provider: model([toolCallResponse([{ name: "transfer_to_writer", input: {} }])]),
        handoffs: [writer],
      });
      lead.hooks.on(HookEvent.HANDOFF, (ctx) => {
        handoffs.push(`${ctx.data.from}->${ctx.data.to}`);
      });
      const { runtime } = await start([lead, writer]);
      const handle = await runtime.submit("lead", "Publish a post");
      const result = await handle.result();
      expect(result.status).toBe("completed");
      expect(result.agent).toBe("writer");
      expect(result.output).toEqual({ title: "Post", words: 1 });
      expect(published).toEqual(["post"]);
      expect(handoffs).toEqual(["lead->writer"]);
      const [summary] = (await runtime.list({ agent: "lead" })).runs;
      expect(summary?.runId).toBe(handle.runId);
      expect(summary?.agent).toBe("lead");
    });

    it("answers a handoff to an agent the runtime does not know with an error result", async () => {
      const stranger = agent("stranger");
      const lead = agent("lead", {
        provider: model([
          toolCallResponse([{ name: "transfer_to_stranger", input: {} }]),
          textResponse("I keep it."),
        ]),
        handoffs: [stranger],
      });
      const { runtime } = await start([lead]);
      const result = await (await runtime.submit("lead", "go")).result();
      expect(result.status).toBe("completed");
      expect(result.agent).toBe("lead");
      expect(result.output).toBe("I keep it.");
      const toolResult = result.messages[2]?.content[0];
      expect(toolResult).toMatchObject({ type: "tool_result", isError: true });
      expect(JSON.stringify(toolResult)).toContain('no agent \\"stranger\\" is registered');
    });

    it("resumes a run parked under the target under the target (the record keeps it)", async () => {
      const published: string[] = [];
      const writer = agent("writer", {
        provider: model([
          toolCallResponse([{ name: "publish", input: { text: "post" }, id: "p1" }]),
          textResponse("Published."),
        ]),
        tools: [publishTool(published)],
        permissions: new PermissionManager({
          default: "allow",
          rules: [{ tool: "publish", decision: "ask" }],
        }),
      });
      const lead = agent("lead", {
        provider: model([toolCallResponse([{ name: "transfer_to_writer", input: {} }])]),
        handoffs: [writer],
      });
      const { runtime } = await start([lead, writer]);
      const handle = await runtime.submit("lead", "Publish");
      const parked = await handle.result();
      expect(parked.status).toBe("awaiting_approval");
      expect(parked.agent).toBe("writer");
      expect(parked.pending.map((each) => each.name)).toEqual(["publish"]);
      const [summary] = (await runtime.list({ status: "awaiting_approval" })).runs;
      expect(summary?.pending?.map((each) => each.name)).toEqual(["publish"]);
      // The decision's step opens the run from the store, under the agent its record keeps.
      await runtime.approve(handle.runId, "p1", { by: "editor" });
      const result = await runtime.handle(handle.runId).result();
      expect(result.status).toBe("completed");
      expect(result.agent).toBe("writer");
      expect(result.output).toBe("Published.");
      expect(published).toEqual(["post"]);
    });
  });
}
