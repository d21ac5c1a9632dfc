// Hardening of the durable runtime (issue #13), run against every backend by
// describeBackendContract: unknown runs, odd call ids, limits and decisions that cannot apply.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentRuntime, PermissionManager, RunNotFoundError, tool } from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { withOverrides } from "../support/backend-overrides.js";
import { captureLogs } from "../support/log-capture.js";
import { toolResults } from "../support/messages.js";
import type { BackendFactory } from "./backend-contract.js";
import {
  collect,
  gate,
  makeAgent,
  oneToolModel,
  Runtimes,
  rejection,
  searchTool,
} from "./fixtures.js";

/** `ask_op`: an operation whose recovery is `ask`, counting its runs by query. */
function askTool() {
  const ran: string[] = [];
  const definition = tool({
    name: "ask_op",
    description: "An operation a person decides on again after a crash.",
    input: z.object({ query: z.string() }),
    recovery: "ask",
    handler: async ({ query }) => {
      ran.push(query);
      return `done ${query}`;
    },
  });
  return { tool: definition, ran };
}

export function describeHardeningContract(name: string, factory: BackendFactory): void {
  describe(`hardening on ${name}`, () => {
    const runtimes = new Runtimes();
    const logged: AgentRuntime[] = [];
    afterEach(async () => {
      await runtimes.closeAll();
      await Promise.all(logged.splice(0).map((runtime) => runtime.close({ timeoutMs: 5000 })));
      await factory.cleanup();
    });

    it("rejects events() and result() of an unknown run with RunNotFoundError", async () => {
      const runtime = await runtimes.start([], factory.create(), { workers: false });
      const handle = runtime.handle("no-such-run");

      const fromEvents = await rejection(collect(handle.events()));
      const fromResult = await rejection(handle.result());

      for (const error of [fromEvents, fromResult]) {
        expect(error).toBeInstanceOf(RunNotFoundError);
        expect((error as RunNotFoundError).code).toBe("run_not_found");
      }
    });

    it("keeps a re-asked call's decision apart from a call whose id looks like its key", async () => {
      // Call "a" is interrupted by a crash and asked about again (its second attempt); the model
      // also named a call "a#1", which a person decided first. Neither decision decides the other.
      const operation = askTool();
      const modelGate = gate();
      const provider = new ScriptedProvider([
        async () => {
          await modelGate.wait();
          return toolCallResponse([
            { id: "a", name: "ask_op", input: { query: "first" } },
            { id: "a#1", name: "ask_op", input: { query: "second" } },
          ]);
        },
        textResponse("done"),
      ]);
      const permissions = new PermissionManager({
        default: "allow",
        rules: [{ tool: "ask_op", when: (call) => call.id === "a#1", decision: "ask" }],
      });
      const agent = makeAgent("ops", { provider, tools: [operation.tool], permissions });
      const backend = factory.create();
      const runtime = await runtimes.start([agent], backend);
      const handle = await runtime.submit("ops", "go");
      await modelGate.entered;
      expect(await backend.markCallStarted(handle.runId, 1, "a")).toBe(true);
      modelGate.open();

      const first = await handle.result();
      expect(first.pending.map((each) => each.toolCallId)).toEqual(["a#1"]);
      await runtime.approve(handle.runId, "a#1", { by: "first" });
      const again = await handle.result();

      expect(again.status).toBe("awaiting_approval");
      expect(again.pending.map((each) => each.toolCallId)).toEqual(["a"]);
      expect(operation.ran).toEqual(["second"]);
      await runtime.approve(handle.runId, "a", { by: "second" });
      const result = await handle.result();

      expect(result.status).toBe("completed");
      expect(operation.ran.sort()).toEqual(["first", "second"]);
      expect(toolResults(result.messages).map((each) => each.content)).toEqual([
        "done first",
        "done second",
      ]);
      const decisions = (await runtime.get(handle.runId)).decisions;
      expect(decisions.map((each) => [each.toolCallId, each.by])).toEqual([
        ["a#1", "first"],
        ["a", "second"],
      ]);
    });

    it("logs a failed job's error without anything a foreign error object carries", async () => {
      const canary = "Bearer canary-5f0c1e";
      const foreign = Object.assign(new Error("upstream said no"), {
        config: { headers: { Authorization: canary } },
        response: { headers: { "x-api-key": canary } },
        toJSON: () => ({ authorization: canary }),
      });
      const backend = factory.create();
      const broken = withOverrides(backend, {
        async rawResults() {
          throw foreign;
        },
      });
      const search = searchTool();
      const agent = makeAgent("support", {
        provider: oneToolModel("search"),
        tools: [search.tool],
      });
      const logs = captureLogs();
      const runtime = new AgentRuntime({ agents: [agent], backend: broken, logger: logs.logger });
      logged.push(runtime);
      await runtime.start();

      await runtime.submit("support", "cats");
      const failed = await logs.waitFor((entry) => entry.msg === "job failed");

      expect(logs.lines.filter((line) => line.includes("canary"))).toEqual([]);
      expect((failed.err as { message?: unknown }).message).toBe("upstream said no");
    });
  });
}
