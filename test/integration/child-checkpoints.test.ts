// CHECKPOINT (SPEC §5, §8) on a parent whose turn starts child runs (SPEC §14): the dispatch
// save stores the parent `waiting`, and its CHECKPOINT says so, as the store does.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  Agent,
  type AgentRuntime,
  CheckpointEventData,
  HookEvent,
  type RunResult,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { deferred } from "../support/gate.js";
import { memoryAndRedisBackends, Runtimes, silent } from "./fixtures.js";
import { requireRedis } from "./redis.js";

const closers: Array<() => Promise<unknown>> = [];
const runtimes = new Runtimes();
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  await runtimes.closeAll();
  for (const close of closers.splice(0).reverse()) await close();
});

describe.each(memoryAndRedisBackends(closers))(
  "CHECKPOINT of a parent run on %s",
  (_name, backendOf) => {
    it("reports the dispatch save that starts children as waiting, as the store holds it", async () => {
      const researcher = new Agent({
        provider: new ScriptedProvider([textResponse("notes")], { loop: true }),
        config: { name: "researcher" },
        logger: silent,
      });
      const lead = new Agent({
        provider: new ScriptedProvider([
          toolCallResponse([
            { name: "research", input: { input: "otters" }, id: "c0" },
            { name: "research", input: { input: "badgers" }, id: "c1" },
          ]),
          textResponse("done"),
        ]),
        config: { name: "lead" },
        tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
        logger: silent,
      });
      let runtime: AgentRuntime | undefined;
      const checkpoints: CheckpointEventData[] = [];
      const stored: string[] = [];
      lead.hooks.on(HookEvent.CHECKPOINT, async (context) => {
        checkpoints.push(CheckpointEventData.parse(context.data));
        // The dispatch save is applied and its children not yet started: nothing else writes the
        // parent until the last of them wakes it.
        if (context.data.phase === "dispatch" && runtime !== undefined) {
          stored.push((await runtime.get(context.data.runId)).status);
        }
      });
      const ended = deferred<RunResult>();
      lead.hooks.on(HookEvent.AGENT_END, (context) => ended.resolve(context.data.result));
      runtime = await runtimes.start([lead, researcher], backendOf());

      await runtime.submit("lead", "write", { runId: "parent" });
      expect((await ended.promise).status).toBe("completed");

      expect(checkpoints.map(({ phase, status }) => [phase, status])).toEqual([
        ["afterLlm", "running"],
        ["dispatch", "waiting"],
        ["compose", "running"],
        ["afterLlm", "running"],
        ["done", "completed"],
      ]);
      expect(stored).toEqual(["waiting"]);
    });
  },
);
