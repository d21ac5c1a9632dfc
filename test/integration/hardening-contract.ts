// Hardening of the durable runtime (issue #13), run against every backend by
// describeBackendContract: unknown runs, odd call ids, limits and decisions that cannot apply.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  AgentRuntime,
  type AgentRuntimeOptions,
  ApprovalError,
  BackendError,
  HarnessError,
  InputTooLargeError,
  type Message,
  PermissionManager,
  RUN_RECORD_VERSION,
  RunNotFoundError,
  StoreVersionError,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { withOverrides } from "../support/backend-overrides.js";
import { captureLogs } from "../support/log-capture.js";
import { toolResults } from "../support/messages.js";
import { storedRun } from "../support/run-records.js";
import type { BackendFactory } from "./backend-contract.js";
import {
  approvalAgent,
  collect,
  gate,
  makeAgent,
  oneToolModel,
  Runtimes,
  rejection,
  searchTool,
  silent,
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

    /** A started runtime with options the shared fixture does not pass; closed after the test. */
    const startWith = async (
      agents: readonly Agent[],
      options: Omit<AgentRuntimeOptions, "agents"> = {},
    ): Promise<AgentRuntime> => {
      const runtime = new AgentRuntime({
        agents,
        backend: factory.create(),
        logger: silent,
        ...options,
      });
      logged.push(runtime);
      await runtime.start();
      return runtime;
    };

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
        // What every tool job reads first, on either backend.
        async openToolCall() {
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

    it("refuses an input over limits.maxInputBytes at submit and stores nothing", async () => {
      const agent = makeAgent("support", { provider: oneToolModel("search") });
      const runtime = await startWith([agent], { limits: { maxInputBytes: 1000 } });
      const messages: Message[] = [
        { role: "user", content: [{ type: "text", text: "é".repeat(600) }] },
      ];

      const fromText = await rejection(runtime.submit("support", "x".repeat(1001)));
      const fromMessages = await rejection(runtime.submit("support", messages));

      for (const error of [fromText, fromMessages]) {
        expect(error).toBeInstanceOf(InputTooLargeError);
        expect((error as InputTooLargeError).code).toBe("input_too_large");
      }
      expect((await runtime.list()).runs).toEqual([]);
      const fits = await runtime.submit("support", "x".repeat(1000));
      expect((await fits.record()).input.text).toHaveLength(1000);
    });

    it("refuses deeply nested or unserialisable input at submit with a HarnessError", async () => {
      const agent = makeAgent("support", { provider: oneToolModel("search") });
      const runtime = await startWith([agent]);
      let nested: Record<string, unknown> = {};
      for (let depth = 0; depth < 100_000; depth++) nested = { inner: nested };
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const withInput = (input: Record<string, unknown>): Message[] => [
        { role: "user", content: [{ type: "text", text: "look" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "search", input }] },
      ];

      const errors = [
        await rejection(runtime.submit("support", withInput(nested))),
        await rejection(runtime.submit("support", withInput(cyclic))),
        await rejection(runtime.submit("support", withInput({ when: new Date(0) }))),
      ];

      for (const error of errors) {
        expect(HarnessError.isHarnessError(error)).toBe(true);
        expect((error as HarnessError).code).toBe("input_invalid");
      }
      expect((await runtime.list()).runs).toEqual([]);
    });

    it("cuts a tool result over limits.maxToolResultBytes before it is committed, and says so", async () => {
      const huge = tool({
        name: "search",
        description: "Returns far too much.",
        input: z.object({ query: z.string() }),
        // Two-, three- and four-byte characters, so a byte cut could fall inside any of them.
        handler: async () => "é€🔧".repeat(1000),
      });
      const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [huge] });
      const runtime = await startWith([agent], { limits: { maxToolResultBytes: 1000 } });

      const result = await (await runtime.submit("support", "cats")).result();

      expect(result.status).toBe("completed");
      const [cut] = toolResults(result.messages);
      const content = cut?.content ?? "";
      expect(Buffer.byteLength(content)).toBeLessThanOrEqual(1000);
      expect(content).toMatch(
        /^(é€🔧)+é?€?\n\[harnessx: this tool result was cut: it was 9000 bytes/,
      );
      expect(content).not.toContain("\uFFFD");
      expect(result.output).toBe(`Answer: ${content}`);
    });

    // Only storage that can be edited from outside (Redis) can hold a corrupt record.
    const { editStored } = factory;
    if (editStored !== undefined)
      it("lists the other runs around a corrupt one, marked record_corrupt; get rejects it", async () => {
        const backend = factory.create();
        const logs = captureLogs("warn");
        const runtime = new AgentRuntime({ agents: [], backend, logger: logs.logger });
        logged.push(runtime);
        await runtime.start({ workers: false });
        for (const [runId, createdAt] of [
          ["r1", 1000],
          ["r2", 2000],
          ["r3", 3000],
        ] as const) {
          expect(await backend.createRun(storedRun(runId, { createdAt }))).toBe(true);
        }
        await editStored("r2", "record", () => "{not json");
        await editStored("r2", "summary", () => "{not json");

        const page = await runtime.list({ limit: 2 });
        const next = await runtime.list({ limit: 2, cursor: page.nextCursor ?? "" });
        const error = await rejection(runtime.get("r2"));

        expect(page.runs.map((run) => [run.runId, run.status, run.error?.code ?? null])).toEqual([
          ["r3", "queued", null],
          ["r2", "queued", "record_corrupt"],
        ]);
        expect(next.runs.map((run) => run.runId)).toEqual(["r1"]);
        expect(error).toBeInstanceOf(BackendError);
        expect((error as BackendError).code).toBe("record_corrupt");
        expect((await runtime.get("r1")).status).toBe("queued");
        const warned = await logs.waitFor((entry) => entry.msg === "a stored run is corrupt");
        expect(warned.runId).toBe("r2");
      });

    if (editStored !== undefined)
      it("a tool job's read (openToolCall) refuses bad stored data: record_corrupt, StoreVersionError", async () => {
        const { agent } = approvalAgent();
        const backend = factory.create();
        const runtime = await runtimes.start([agent], backend);
        const handle = await runtime.submit("ops", "old.log");
        expect((await handle.result()).status).toBe("awaiting_approval");
        const original = await backend.openToolCall(handle.runId, 1, "call_1");
        expect(original.run?.call?.status).toBe("asked");
        const code = async () => {
          const error = await rejection(backend.openToolCall(handle.runId, 1, "call_1"));
          expect(error).toBeInstanceOf(BackendError);
          return (error as BackendError).code;
        };

        let stored = "";
        await editStored(handle.runId, "record", (json) => {
          stored = json;
          return "{not json";
        });
        expect(await code()).toBe("record_corrupt");
        // A call state without its call (the parked call's place in the summary, broken).
        await editStored(handle.runId, "record", () =>
          stored.replace('"pending":0', '"pending":"0"'),
        );
        expect(await code()).toBe("record_corrupt");
        await editStored(handle.runId, "record", () =>
          stored.replace(`"schemaVersion":${RUN_RECORD_VERSION}`, '"schemaVersion":99'),
        );
        const error = await rejection(backend.openToolCall(handle.runId, 1, "call_1"));
        expect(error).toBeInstanceOf(StoreVersionError);
        await editStored(handle.runId, "record", () => stored);
        expect(await backend.openToolCall(handle.runId, 1, "call_1")).toEqual(original);
      });

    if (editStored !== undefined)
      it("refuses a decision on a call whose stored input was changed, with approval_tampered", async () => {
        const { agent, deleted } = approvalAgent();
        const runtime = await startWith([agent]);
        const handle = await runtime.submit("ops", "old.log");
        expect((await handle.result()).pending.map((each) => each.input)).toEqual([
          { path: "old.log" },
        ]);
        // The parked call's input is stored once: in the record, or (since schemaVersion 4)
        // in the summary's pending list beside it. Changed wherever it is.
        for (const field of ["record", "summary"] as const) {
          await editStored(handle.runId, field, (json) =>
            json.replaceAll('"path":"old.log"', '"path":"/etc/passwd"'),
          );
        }

        const error = await rejection(runtime.approve(handle.runId, "call_1", { by: "ops" }));

        expect(error).toBeInstanceOf(ApprovalError);
        expect((error as ApprovalError).code).toBe("approval_tampered");
        expect((await runtime.get(handle.runId)).decisions).toEqual([]);
        expect((await handle.result()).status).toBe("awaiting_approval");
        expect(deleted).toEqual([]);
      });
  });
}
