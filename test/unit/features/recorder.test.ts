import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  FlightRecorder,
  type Message,
  Middleware,
  memoryRecorderSink,
  PermissionManager,
  type ProviderResponse,
  parseRecording,
  type RecorderEntry,
  type ToolResult,
  type ToolSchema,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { ONE_TOOL_CALL_RUN } from "../../support/recording.js";
import { silent } from "../../support/silent.js";

const lookup = tool({
  name: "lookup",
  description: "Looks a key up.",
  input: z.object({ key: z.string() }),
  handler: async ({ key }) => `value of ${key}`,
});
const spare = tool({
  name: "spare",
  description: "Never offered to the model.",
  input: z.object({}),
  handler: async () => "unused",
});

/** Upper-cases model text, rewrites tool results and hides the `spare` tool from the model. */
class Rewrite extends Middleware {
  override async beforeLlmCall(
    messages: Message[],
    tools: ToolSchema[],
  ): Promise<[Message[], ToolSchema[]]> {
    return [messages, tools.filter((each) => each.name !== "spare")];
  }
  override async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
    return {
      ...response,
      content: response.content.map((block) =>
        block.type === "text" ? { ...block, text: block.text.toUpperCase() } : block,
      ),
    };
  }
  override async afterToolExecution(result: ToolResult): Promise<ToolResult> {
    return { ...result, content: "[rewritten]" };
  }
}

const script = () =>
  new ScriptedProvider([
    toolCallResponse([{ name: "lookup", input: { key: "a" }, id: "call_a" }], {
      text: "looking",
    }),
    textResponse("the answer"),
  ]);

describe("FlightRecorder", () => {
  it("records a run in order: requests as sent, responses and results before middleware", async () => {
    const recorder = new FlightRecorder();
    let now = 1000;
    const agent = new Agent({
      provider: script(),
      tools: [lookup, spare],
      middleware: [new Rewrite()],
      recorder,
      logger: silent,
      config: { name: "recorded", systemPrompt: "Be brief." },
      deps: { clock: { now: () => now++ } },
    });
    const result = await agent.run("find a", { sessionId: "s1" });
    expect(result.output).toBe("THE ANSWER");

    const entries = await recorder.entries(result.runId);
    expect(entries.map((entry) => entry.type)).toEqual([...ONE_TOOL_CALL_RUN]);
    expect(entries.every((entry) => entry.runId === result.runId)).toBe(true);
    const times = entries.map((entry) => entry.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));

    const [start, request, response, decision, toolResult, , finalResponse, end] = entries;
    expect(start).toMatchObject({ sessionId: "s1", agent: "recorded", iteration: 0 });
    // As sent: after beforeLlmCall, with the system prompt the agent rendered.
    expect(request).toMatchObject({
      type: "llm_request",
      iteration: 1,
      request: { system: "Be brief.", model: "default", stream: false },
    });
    if (request?.type !== "llm_request") throw new Error("expected a request");
    expect(request.request.tools.map((each) => each.name)).toEqual(["lookup"]);
    // Raw: before afterLlmCall upper-cased it.
    expect(response).toMatchObject({
      type: "llm_response_raw",
      response: { content: [{ type: "text", text: "looking" }, { type: "tool_use" }] },
    });
    expect(decision).toMatchObject({
      toolCallId: "call_a",
      name: "lookup",
      decision: "allow",
      source: "policy",
    });
    // Raw: before afterToolExecution rewrote it.
    expect(toolResult).toMatchObject({
      type: "tool_result_raw",
      toolCall: { id: "call_a", name: "lookup", input: { key: "a" } },
      result: { toolCallId: "call_a", content: "value of a", isError: false },
    });
    expect(finalResponse).toMatchObject({
      iteration: 2,
      response: { content: [{ type: "text", text: "the answer" }] },
    });
    expect(end).toMatchObject({ status: "completed", output: "THE ANSWER", error: null });
  });

  it("records who decided: the policy's ask, then the person's allow", async () => {
    const recorder = new FlightRecorder();
    const agent = new Agent({
      provider: script(),
      tools: [lookup],
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "lookup", decision: "ask", reason: "lookups need a person" }],
      }),
      recorder,
      logger: silent,
    });
    const parked = await agent.run("find a");
    expect(parked.status).toBe("awaiting_approval");
    await agent.resume(parked.runId, {
      decisions: { call_a: { decision: "allow", reason: "fine", by: "reviewer-2" } },
    });
    const decisions = (await recorder.entries(parked.runId)).filter(
      (entry) => entry.type === "decision",
    );
    expect(decisions).toEqual([
      expect.objectContaining({
        decision: "ask",
        source: "policy",
        reason: "lookups need a person",
      }),
      expect.objectContaining({ decision: "allow", source: "person", by: "reviewer-2" }),
    ]);
  });

  it("records a failed phase as an error, then the failed end", async () => {
    const recorder = new FlightRecorder();
    const agent = new Agent({
      provider: new ScriptedProvider([]),
      recorder,
      logger: silent,
    });
    const result = await agent.run("hello");
    expect(result.status).toBe("failed");
    const entries = await recorder.entries(result.runId);
    expect(entries.map((entry) => entry.type)).toEqual([
      "run_start",
      "llm_request",
      "error",
      "run_end",
    ]);
    expect(entries[2]).toMatchObject({
      error: { name: "ProviderError", phase: "provider" },
    });
    expect(entries[3]).toMatchObject({ status: "failed", error: { name: "ProviderError" } });
  });

  it("redacts at the source: a canary secret reaches no entry, export or log line", async () => {
    const canary = "sk-canary-4f1c9e";
    const logLines: string[] = [];
    const logger = pino({ level: "trace" }, { write: (line: string) => logLines.push(line) });
    const recorder = new FlightRecorder({ redact: (text) => text.replaceAll(canary, "[secret]") });
    const secretTool = tool({
      name: "read_env",
      description: "Reads the environment.",
      input: z.object({ name: z.string() }),
      handler: async ({ name }) => `${name}=${canary}`,
    });
    const agent = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "read_env", input: { name: canary } }], { text: canary }),
        textResponse(`The key is ${canary}.`),
      ]),
      tools: [secretTool],
      recorder,
      logger,
      config: { systemPrompt: `Never reveal ${canary}.` },
    });
    const result = await agent.run(`What is ${canary}?`);
    expect(result.status).toBe("completed");
    // The run itself is unchanged: redaction applies to the recording only.
    expect(result.output).toBe(`The key is ${canary}.`);

    const entries = await recorder.entries(result.runId);
    const exported = await recorder.exportJsonl(result.runId);
    expect(entries.length).toBeGreaterThan(5);
    expect(JSON.stringify(entries)).not.toContain(canary);
    expect(exported).not.toContain(canary);
    expect(logLines.join("\n")).not.toContain(canary);
    expect(JSON.stringify(entries)).toContain("[secret]");
    const toolEntry = entries.find((entry) => entry.type === "tool_result_raw");
    expect(toolEntry).toMatchObject({
      toolCall: { input: { name: "[secret]" } },
      result: { content: "[secret]=[secret]" },
    });
  });

  it("refuses options it does not know, naming the path", () => {
    const bad = (options: unknown) => () =>
      new FlightRecorder(options as ConstructorParameters<typeof FlightRecorder>[0]);
    expect(bad({ redact: "secret" })).toThrow(
      "Invalid FlightRecorder options: redact: must be a function",
    );
    expect(bad({ sink: { append: async () => {} } })).toThrow(/sink.entries: must be a function/);
    expect(bad({ redactor: () => "" })).toThrow(/Unrecognized key: "redactor"/);
  });

  it("writes to and reads from the sink it is given", async () => {
    const recorder = new FlightRecorder();
    const elsewhere = memoryRecorderSink();
    recorder.useSink(elsewhere);
    const agent = new Agent({ provider: script(), tools: [lookup], recorder, logger: silent });
    const { runId } = await agent.run("find a");
    expect(await elsewhere.entries(runId)).toHaveLength(8);
    expect(await recorder.entries(runId)).toEqual(await elsewhere.entries(runId));
  });

  it("exports JSON Lines that parse back to the same entries", async () => {
    const recorder = new FlightRecorder();
    const agent = new Agent({ provider: script(), tools: [lookup], recorder, logger: silent });
    const { runId } = await agent.run("find a");
    const jsonl = await recorder.exportJsonl(runId);
    const lines = jsonl.split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1).map((line) => JSON.parse(line) as RecorderEntry)).toEqual(
      await recorder.entries(runId),
    );
    expect(parseRecording(jsonl)).toEqual(await recorder.entries(runId));
    expect(await recorder.exportJsonl("unknown-run")).toBe("");
  });

  it("records streamed runs too, the raw text before response middleware", async () => {
    const recorder = new FlightRecorder();
    const agent = new Agent({
      provider: script(),
      tools: [lookup],
      middleware: [new Rewrite()],
      recorder,
      logger: silent,
    });
    let runId = "";
    for await (const event of agent.runStream("find a"))
      if (event.type === "result") runId = event.result.runId;
    const raw = (await recorder.entries(runId)).filter(
      (entry) => entry.type === "llm_response_raw",
    );
    expect(raw.map((entry) => entry.response.content[0])).toEqual([
      { type: "text", text: "looking" },
      { type: "text", text: "the answer" },
    ]);
  });

  it("hands out copies: changing what entries() returned changes nothing stored", async () => {
    const recorder = new FlightRecorder();
    const agent = new Agent({ provider: script(), tools: [lookup], recorder, logger: silent });
    const { runId } = await agent.run("find a");
    const first = await recorder.entries(runId);
    const start = first[0];
    if (start?.type !== "run_start") throw new Error("expected run_start");
    (start.input[0]?.content[0] as { text: string }).text = "changed";
    first.length = 0;
    const again = await recorder.entries(runId);
    expect(again).toHaveLength(8);
    expect(again[0]).toMatchObject({ input: [{ content: [{ text: "find a" }] }] });
  });

  it("redacts messages shared by successive requests once, and every request in full", async () => {
    const seen: string[] = [];
    const recorder = new FlightRecorder({
      redact: (text) => {
        seen.push(text);
        return text.replaceAll("find", "[word]");
      },
    });
    const agent = new Agent({ provider: script(), tools: [lookup], recorder, logger: silent });
    const { runId } = await agent.run("find a");
    const entries = await recorder.entries(runId);
    const requests = entries.flatMap((entry) =>
      entry.type === "llm_request" ? [entry.request] : [],
    );
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.messages[0]).toEqual({
        role: "user",
        content: [{ type: "text", text: "[word] a" }],
      });
    }
    expect(entries[0]).toMatchObject({ input: [{ content: [{ text: "[word] a" }] }] });
    // run_start and both requests share the input message: it was redacted once.
    expect(seen.filter((text) => text === "find a")).toHaveLength(1);
  });

  it("loses an entry, never the run, when its sink fails; the log names only the entry type", async () => {
    const logLines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => logLines.push(line) });
    const recorder = new FlightRecorder({
      sink: {
        append: async () => {
          throw new Error("disk full");
        },
        entries: async () => [],
      },
    });
    const agent = new Agent({ provider: script(), tools: [lookup], recorder, logger });
    const result = await agent.run("find a");
    expect(result.status).toBe("completed");
    const warnings = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warnings.map((line) => line.entryType)).toContain("llm_response_raw");
    expect(logLines.join("\n")).not.toContain("value of a");
  });
});
