// Extensions' saved state and flight recordings in a backend's store (SPEC §9, §10), run against
// every backend by describeBackendContract: memory, Redis and a Redis Cluster.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunBackend } from "../../src/backend.js";
import {
  Agent,
  type AgentOptions,
  type ExtensionContext,
  FlightRecorder,
  HookEvent,
  type Message,
  Middleware,
  type ProviderResponse,
  type RecorderEntry,
  RunNotFoundError,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { ONE_TOOL_CALL_RUN } from "../support/recording.js";
import type { BackendFactory } from "./backend-contract.js";
import { Runtimes, rejection, silent } from "./fixtures.js";

const address = (
  overrides: Partial<Record<"agent" | "extension" | "key" | "sessionId", string>>,
) => ({
  agent: "support",
  extension: "memo",
  key: "visits",
  sessionId: "s1",
  ...overrides,
});

const text = (value: string): Message => ({
  role: "user",
  content: [{ type: "text", text: value }],
});

const request = (runId: string, iteration: number, messages: Message[]): RecorderEntry => ({
  type: "llm_request",
  runId,
  iteration,
  at: 1000 + iteration,
  request: {
    system: "be brief",
    messages,
    tools: [],
    model: "m",
    maxTokens: 100,
    temperature: 0,
    stream: false,
    prefixKey: null,
  },
});

const resultText = (message: Message) =>
  message.content.map((block) => (block.type === "tool_result" ? block.content : "")).join("");

/** Shouts the model's text: the recording keeps what the model said before it. */
class Shout extends Middleware {
  override async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
    return {
      ...response,
      content: response.content.map((block) =>
        block.type === "text" ? { ...block, text: block.text.toUpperCase() } : block,
      ),
    };
  }
}

/**
 * `tally`: one tool call, then an answer naming the tool's result. Its extension counts the
 * session's runs in saved state (AGENT_START), and its tool reports the count.
 */
function tallyAgent(recorder: FlightRecorder, extra: Partial<AgentOptions> = {}): Agent {
  const runs = { state: undefined as undefined | { get(): Promise<number> } };
  return new Agent({
    provider: new ScriptedProvider(
      [
        (request) => {
          const last = request.messages.at(-1);
          return last?.role === "tool"
            ? textResponse(`saw ${resultText(last)}`)
            : toolCallResponse([{ name: "runs_so_far", input: {}, id: "c1" }]);
        },
      ],
      { loop: true },
    ),
    tools: [
      tool({
        name: "runs_so_far",
        description: "How many runs this session has had.",
        input: z.object({}),
        handler: async () => `runs=${await runs.state?.get()}`,
      }),
    ],
    middleware: [new Shout()],
    recorder,
    logger: silent,
    config: { name: "tally" },
    deps: { clock: { now: () => 1000 } },
    extensions: [
      {
        name: "memo",
        install: (ctx: ExtensionContext) => {
          const count = ctx.state("runs", 0);
          runs.state = count;
          ctx.addHook(HookEvent.AGENT_START, async () => {
            await count.set((await count.get()) + 1);
          });
        },
      },
    ],
    ...extra,
  });
}

export function describeRunExtrasContract(name: string, factory: BackendFactory): void {
  describe(`saved state and recordings in the store of ${name}`, () => {
    const runtimes = new Runtimes();
    const started: RunBackend[] = [];
    const start = async () => {
      const backend = factory.create();
      started.push(backend);
      await backend.start({ concurrency: 1, logger: silent });
      return backend;
    };
    afterEach(async () => {
      await runtimes.closeAll();
      await Promise.all(started.splice(0).map((backend) => backend.close({ timeoutMs: 1000 })));
      await factory.cleanup();
    });

    it("keeps saved state per agent, extension, key and session, as JSON copies", async () => {
      const backend = await start();
      const store = backend.extensionState;
      expect(await store.get(address({}))).toBeUndefined();

      const saved = { count: 2, notes: ["a:b", "{x}", "\u00e9"] };
      await store.set(address({}), saved);
      saved.notes.push("changed after set");
      await store.set(address({ agent: "billing" }), 10);
      await store.set(address({ extension: "audit" }), 11);
      await store.set(address({ key: "calls" }), 12);
      await store.set(address({ sessionId: "s2" }), 13);
      // Parts that would run together if joined naively stay apart.
      await store.set(address({ agent: "a:b", extension: "c" }), "first");
      await store.set(address({ agent: "a", extension: "b:c" }), "second");

      expect(await store.get(address({}))).toEqual({ count: 2, notes: ["a:b", "{x}", "\u00e9"] });
      expect(await store.get(address({ agent: "billing" }))).toBe(10);
      expect(await store.get(address({ extension: "audit" }))).toBe(11);
      expect(await store.get(address({ key: "calls" }))).toBe(12);
      expect(await store.get(address({ sessionId: "s2" }))).toBe(13);
      expect(await store.get(address({ agent: "a:b", extension: "c" }))).toBe("first");
      expect(await store.get(address({ agent: "a", extension: "b:c" }))).toBe("second");

      await store.set(address({}), null);
      expect(await store.get(address({}))).toBeNull();
    });

    it("refuses saved state that is not JSON data and keeps what was there", async () => {
      const backend = await start();
      await backend.extensionState.set(address({}), { ok: true });
      for (const bad of [undefined, new Map(), { when: new Date(0) }, Number.NaN]) {
        const error = await rejection(backend.extensionState.set(address({}), bad));
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).toMatch(/^Saved state must be JSON data/);
      }
      expect(await backend.extensionState.get(address({}))).toEqual({ ok: true });
    });

    it("keeps each run's recording in order and gives requests back whole", async () => {
      const backend = await start();
      const sink = backend.recordings;
      const [first, second, third] = [text("one"), text("two"), text("three")];
      const entries = [
        request("r1", 1, [first as Message]),
        request("r1", 2, [first as Message, second as Message]),
        // A trimmed conversation: nothing shared with the request before.
        request("r1", 3, [third as Message]),
        // Equal to an earlier one but built anew, as after a restore in another step.
        request("r1", 4, [structuredClone(third as Message), structuredClone(first as Message)]),
      ];
      const other = request("r2", 1, [second as Message]);
      await sink.append("r1", entries[0] as RecorderEntry);
      await sink.append("r2", other);
      for (const entry of entries.slice(1)) await sink.append("r1", entry);

      expect(await sink.entries("r1")).toEqual(entries);
      expect(await sink.entries("r2")).toEqual([other]);
      expect(await sink.entries("never-recorded")).toEqual([]);
    });

    it("records a durable run as a direct run records it, and reads it back from any runtime", async () => {
      const durable = new FlightRecorder();
      const backend = factory.create();
      const runtime = await runtimes.start([tallyAgent(durable)], backend);
      const submitted = await runtime.submit("tally", "go", { sessionId: "s1" });
      const result = await submitted.result();
      expect(result.status).toBe("completed");
      expect(result.output).toBe("SAW RUNS=1");

      // A durable run streams (its deltas reach handle.events()): the direct run to compare
      // with is a streamed one.
      const direct = new FlightRecorder();
      let expected: string | null | undefined;
      for await (const event of tallyAgent(direct).runStream("go", {
        runId: result.runId,
        sessionId: "s1",
      })) {
        if (event.type === "result") expected = event.result.output;
      }
      expect(expected).toBe("SAW RUNS=1");

      const recording = await runtime.recording(result.runId);
      expect(recording.map((entry) => entry.type)).toEqual([...ONE_TOOL_CALL_RUN]);
      expect(recording).toEqual(await direct.entries(result.runId));
      // The agent's recorder reads the backend's recording too.
      expect(await durable.entries(result.runId)).toEqual(recording);
      // Raw: the model's text before the middleware shouted it.
      const responses = recording.filter((entry) => entry.type === "llm_response_raw");
      expect(responses.at(-1)?.response.content).toEqual([{ type: "text", text: "saw runs=1" }]);

      // A runtime that only reads has the same recording, and refuses an unknown run.
      const reader = await runtimes.start([], backend, { workers: false });
      expect(await reader.recording(result.runId)).toEqual(recording);
      expect(await rejection(reader.recording("no-such-run"))).toBeInstanceOf(RunNotFoundError);
    });

    it("saves extension state in the store: the next run of the session reads it", async () => {
      const backend = factory.create();
      const runtime = await runtimes.start([tallyAgent(new FlightRecorder())], backend);
      const outputs: unknown[] = [];
      for (const sessionId of ["s1", "s1", "s2", "s1"]) {
        outputs.push((await (await runtime.submit("tally", "go", { sessionId })).result()).output);
      }
      expect(outputs).toEqual(["SAW RUNS=1", "SAW RUNS=2", "SAW RUNS=1", "SAW RUNS=3"]);
      const stored = { agent: "tally", extension: "memo", key: "runs" };
      expect(await backend.extensionState.get({ ...stored, sessionId: "s1" })).toBe(3);
      expect(await backend.extensionState.get({ ...stored, sessionId: "s2" })).toBe(1);
    });

    it("deletes a run's recording when the run is pruned", async () => {
      const backend = factory.create();
      const runtime = await runtimes.start([tallyAgent(new FlightRecorder())], backend);
      const result = await (await runtime.submit("tally", "go")).result();
      expect(await runtime.recording(result.runId)).toHaveLength(ONE_TOOL_CALL_RUN.length);

      expect(await runtime.prune({ finishedBefore: Date.now() + 60_000 })).toEqual({
        deleted: 1,
        unreadable: 0,
      });
      expect(await rejection(runtime.recording(result.runId))).toBeInstanceOf(RunNotFoundError);
      expect(await backend.recordings.entries(result.runId)).toEqual([]);
    });
  });
}
