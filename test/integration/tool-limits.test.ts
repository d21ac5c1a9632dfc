// Tool input and result limits and unrepresentable results (SPEC §8), in direct runs and in a
// durable run on real Redis: a side-effect counter per handler call, and a canary scanned in
// the run's result, its recording and every Redis key.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  FlightRecorder,
  memoryBackend,
  type ProviderResponse,
  redisBackend,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { toolResults } from "../support/messages.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";
import { keysHolding } from "./redis-values.js";

const silent = pino({ level: "silent" });
const MB = 1_048_576;

/** A tool that counts its calls and returns what `output` gives. */
function countingTool(name: string, output: (input: { text: string }) => unknown) {
  const calls = { count: 0 };
  const made = tool({
    name,
    description: "Counts its calls.",
    input: z.object({ text: z.string() }),
    handler: async (input) => {
      calls.count += 1;
      return output(input);
    },
  });
  return { tool: made, calls };
}

/** One tool call with `input`, then an answer quoting the tool's result. */
const oneCallModel = (name: string, input: Record<string, unknown>) =>
  new ScriptedProvider([
    toolCallResponse([{ name, input }]),
    (request): ProviderResponse => {
      const [result] = toolResults(request.messages);
      return textResponse(`saw ${result?.isError === true ? "an error" : "a result"}`);
    },
  ]);

describe("a handler's return value JSON cannot represent (direct run)", () => {
  it("becomes an error result saying so, and the run goes on", async () => {
    const { tool: odd, calls } = countingTool("ledger", () => ({ amount: 10n }));
    const agent = new Agent({
      provider: oneCallModel("ledger", { text: "x" }),
      tools: [odd],
      logger: silent,
    });
    const result = await agent.run("Balance?");
    expect(calls.count).toBe(1);
    expect(result.status).toBe("completed");
    expect(toolResults(result.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1",
        content:
          'Tool "ledger" returned a value JSON cannot represent (a BigInt at "amount"); return a string or JSON data.',
        isError: true,
      },
    ]);
    expect(result.output).toBe("saw an error");
  });
});

describe("limits.maxToolResultBytes in a direct run (default 1 MB)", () => {
  it("cuts a 3 MB result and marks the cut, in the conversation and the recording", async () => {
    const { tool: big } = countingTool("dump", () => "x".repeat(3 * MB));
    const recorder = new FlightRecorder();
    const agent = new Agent({
      provider: oneCallModel("dump", { text: "all" }),
      tools: [big],
      recorder,
      logger: silent,
    });
    const result = await agent.run("Dump it");
    const [cut] = toolResults(result.messages);
    expect(cut?.isError).toBe(false);
    expect(Buffer.byteLength(cut?.content ?? "")).toBeLessThanOrEqual(MB);
    expect(cut?.content).toMatch(
      /^x+\n\[harnessx: this tool result was cut: it was 3145728 bytes, over the limit of 1048576 bytes/,
    );
    const raw = (await recorder.entries(result.runId)).find(
      (entry) => entry.type === "tool_result_raw",
    );
    expect(raw?.type === "tool_result_raw" && raw.result.content).toBe(cut?.content);
  });

  it("cuts knowledge_read of a 3 MB document", async () => {
    const folder = await mkdtemp(join(tmpdir(), "harnessx-knowledge-"));
    try {
      await writeFile(join(folder, "huge.md"), `# Huge\n${"word ".repeat((3 * MB) / 5)}`);
      const agent = new Agent({
        provider: oneCallModel("knowledge_read", { bundle: "kb", path: "huge.md" }),
        knowledge: [{ name: "kb", path: folder }],
        logger: silent,
      });
      const result = await agent.run("Read it");
      const [read] = toolResults(result.messages);
      expect(read?.isError).toBe(false);
      expect(Buffer.byteLength(read?.content ?? "")).toBeLessThanOrEqual(MB);
      expect(read?.content).toMatch(/^# Huge\nword word /);
      expect(read?.content).toMatch(/\[harnessx: this tool result was cut: it was \d+ bytes/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe("limits.maxToolInputBytes (default 1 MB)", () => {
  it("refuses an oversized input from the model in a direct run: no handler, an error result, stored nowhere", async () => {
    const canary = `canary-${randomUUID()}`;
    const { tool: echo, calls } = countingTool("echo", ({ text }) => text.length);
    const recorder = new FlightRecorder();
    const logs: string[] = [];
    const agent = new Agent({
      provider: oneCallModel("echo", { text: `${canary}${"y".repeat(MB)}` }),
      tools: [echo],
      recorder,
      logger: pino({ level: "debug" }, { write: (line) => logs.push(line) }),
    });
    const result = await agent.run("Echo this");
    expect(calls.count).toBe(0);
    expect(result.status).toBe("completed");
    const [refused] = toolResults(result.messages);
    expect(refused).toMatchObject({ toolCallId: "call_1", isError: true });
    expect(refused?.content).toMatch(
      /^The input of tool "echo" was \d+ bytes, over the limit of 1048576 bytes \(limits\.maxToolInputBytes\); it was not run nor stored\./,
    );
    expect(result.output).toBe("saw an error");
    expect(JSON.stringify(result)).not.toContain(canary);
    expect(await recorder.exportJsonl(result.runId)).not.toContain(canary);
    expect(logs.join("")).not.toContain(canary);
  });

  it("keeps an input under the limit whole", async () => {
    const { tool: echo, calls } = countingTool("echo", ({ text }) => text.length);
    const agent = new Agent({
      provider: oneCallModel("echo", { text: "z".repeat(MB - 100) }),
      tools: [echo],
      logger: silent,
    });
    const result = await agent.run("Echo this");
    expect(calls.count).toBe(1);
    expect(toolResults(result.messages)[0]).toMatchObject({
      content: String(MB - 100),
      isError: false,
    });
  });

  describe("in a durable run on Redis", () => {
    const prefixes: string[] = [];
    const runtimes: AgentRuntime[] = [];
    beforeAll(async () => {
      await requireRedis();
    });
    afterEach(async () => {
      await Promise.all(runtimes.splice(0).map((runtime) => runtime.close({ timeoutMs: 5000 })));
      await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
    });

    it("refuses an input over the runtime's limit; no Redis key holds it", async () => {
      const prefix = uniquePrefix();
      prefixes.push(prefix);
      const canary = `canary-${randomUUID()}`;
      const { tool: echo, calls } = countingTool("echo", ({ text }) => text.length);
      const agent = new Agent({
        provider: oneCallModel("echo", { text: `${canary}${"y".repeat(20_000)}` }),
        tools: [echo],
        recorder: new FlightRecorder(),
        logger: silent,
        config: { name: "echoer" },
      });
      const runtime = new AgentRuntime({
        agents: [agent],
        backend: redisBackend({ url: redisUrl(), prefix }),
        limits: { maxToolInputBytes: 10_000 },
        logger: silent,
      });
      runtimes.push(runtime);
      await runtime.start();
      const result = await (await runtime.submit("echoer", "Echo this")).result();
      expect(calls.count).toBe(0);
      expect(result.status).toBe("completed");
      expect(toolResults(result.messages)[0]?.content).toMatch(
        /^The input of tool "echo" was 20\d{3} bytes, over the limit of 10000 bytes/,
      );
      expect(JSON.stringify(await runtime.get(result.runId))).not.toContain(canary);
      expect(JSON.stringify(await runtime.recording(result.runId))).not.toContain(canary);
      expect(await keysHolding(prefix, canary)).toEqual([]);
    });

    it("refuses a limit that is not a positive whole number, naming it", () => {
      expect(
        () =>
          new AgentRuntime({
            agents: [],
            backend: memoryBackend(),
            limits: { maxToolInputBytes: 0 },
          }),
      ).toThrow(/maxToolInputBytes/);
    });
  });
});
