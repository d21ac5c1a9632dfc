import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  type ExtensionContext,
  ExtensionError,
  FlightRecorder,
  memoryBackend,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { ONE_TOOL_CALL_RUN } from "../support/recording.js";
import { silent } from "../support/silent.js";

let runtime: AgentRuntime | undefined;

afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("on the embedded runtime", () => {
  it("records a durable run like a direct one, and saved state follows the session", async () => {
    const recorder = new FlightRecorder();
    const calls = tool({
      name: "count",
      description: "Counts this session's calls.",
      input: z.object({}),
      handler: async () => "counted",
    });
    const seen: number[] = [];
    const agent = new Agent({
      provider: new ScriptedProvider(
        [toolCallResponse([{ name: "count", input: {}, id: "c1" }]), textResponse("done")],
        { loop: true },
      ),
      tools: [calls],
      recorder,
      logger: silent,
      config: { name: "durable" },
      extensions: [
        {
          name: "tally",
          install: (ctx: ExtensionContext) => {
            const tally = ctx.state("tally", 0);
            ctx.addMiddleware({
              afterToolExecution: async (result) => {
                const next = (await tally.get()) + 1;
                await tally.set(next);
                seen.push(next);
                return result;
              },
            });
          },
        },
      ],
    });
    // runtime.start() starts the agent, which installs its extensions.
    runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger: silent });
    await runtime.start();
    const first = await (await runtime.submit("durable", "count", { sessionId: "s1" })).result();
    const second = await (await runtime.submit("durable", "count", { sessionId: "s1" })).result();
    expect([first.status, second.status]).toEqual(["completed", "completed"]);
    expect(seen).toEqual([1, 2]);

    const types = (await recorder.entries(first.runId)).map((entry) => entry.type);
    expect(types).toEqual([...ONE_TOOL_CALL_RUN]);
  });

  it("fails start() with the named error when an extension fails to install, adding nothing", async () => {
    const agent = new Agent({
      provider: new ScriptedProvider([textResponse("never")]),
      logger: silent,
      config: { name: "broken" },
      extensions: [
        {
          name: "licensed",
          install: (ctx: ExtensionContext) => {
            ctx.addTool(
              tool({ name: "paid", description: "Paid.", input: z.object({}), handler: () => "" }),
            );
            throw new Error("no licence key");
          },
        },
      ],
    });
    runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger: silent });
    const failure = await runtime.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExtensionError);
    expect(failure).toMatchObject({ extension: "licensed", code: "extension_failed" });
    expect(agent.tools.has("paid")).toBe(false);
    expect(agent.extensions.names).toEqual([]);
    await expect(runtime.submit("broken", "go")).rejects.toThrow(/needs a started runtime/);
  });
});
