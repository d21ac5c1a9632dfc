import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  type ParkedRun,
  PermissionManager,
  type ToolResult,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { toolResults } from "../../support/messages.js";

// Tool-call ids are data from the model: any string works as an id (SPEC §2).
const ODD_IDS: ReadonlyArray<[string, string]> = [
  ["__proto__", "__proto__"],
  ["constructor", "constructor"],
  ["toString", "toString"],
  ["hasOwnProperty", "hasOwnProperty"],
  ["valueOf", "valueOf"],
  ["a colon", ":"],
  ["a path", "../"],
  ["unicode", "工具-🔧-é\u0000ü"],
  ["a lone surrogate", "call_\uD800"],
  ["a 10 KB id", "x".repeat(10 * 1024)],
];

/** A search tool that counts its runs; its answer names the query. */
const searchTool = (runs: string[]) =>
  tool({
    name: "search",
    description: "Return a fixture search result for the requested query.",
    input: z.object({ query: z.string() }),
    handler: ({ query }, context) => {
      runs.push(context.toolCallId);
      return `Results for ${query}`;
    },
  });

/** Records every result result middleware sees. */
const recordingMiddleware = (seen: ToolResult[]) => ({
  afterToolExecution: async (result: ToolResult) => {
    seen.push(result);
    return result;
  },
});

function makeAgent(options: AgentOptions & { runs: string[]; seen: ToolResult[] }): Agent {
  const { runs, seen, ...rest } = options;
  return new Agent({
    logger: pino({ level: "silent" }),
    tools: [searchTool(runs)],
    middleware: [recordingMiddleware(seen)],
    ...rest,
  });
}

const asking = () =>
  new PermissionManager({ rules: [{ tool: "search", decision: "ask", reason: "check first" }] });

const jsonCopy = (parked: ParkedRun): ParkedRun => JSON.parse(JSON.stringify(parked)) as ParkedRun;

describe.each(ODD_IDS)("a tool-call id that is %s", (_label, id) => {
  it("gets its result into the conversation, seen by result middleware", async () => {
    const runs: string[] = [];
    const seen: ToolResult[] = [];
    const provider = new ScriptedProvider([
      toolCallResponse([
        { name: "search", input: { query: "odd" }, id },
        { name: "search", input: { query: "plain" }, id: "call_plain" },
      ]),
      textResponse("done"),
    ]);
    const agent = makeAgent({ provider, runs, seen });

    const result = await agent.run("go");

    expect(result.status).toBe("completed");
    expect(runs).toEqual([id, "call_plain"]);
    const expected = [
      { toolCallId: id, content: "Results for odd", isError: false },
      { toolCallId: "call_plain", content: "Results for plain", isError: false },
    ];
    expect(seen).toEqual(expected);
    expect(toolResults(result.messages)).toEqual(
      expected.map((each) => ({ type: "tool_result", ...each })),
    );
    // The request for the second turn carried the results back to the model.
    expect(JSON.stringify(provider.requests[1]?.messages)).toContain("Results for odd");
  });

  it("parks, survives a JSON round trip and resumes on another agent with { [id]: 'allow' }", async () => {
    const runs: string[] = [];
    const seen: ToolResult[] = [];
    const first = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "search", input: { query: "odd" }, id }]),
      ]),
      permissions: asking(),
      runs,
      seen,
    });

    const parked = await first.run("go", { runId: "run-odd" });

    expect(parked.status).toBe("awaiting_approval");
    expect(parked.pending).toEqual([
      { toolCallId: id, name: "search", input: { query: "odd" }, reason: "check first" },
    ]);
    expect(runs).toEqual([]);
    const copy = jsonCopy(first.parked("run-odd"));
    expect(copy.pending[0]?.toolCallId).toBe(id);

    const second = makeAgent({
      provider: new ScriptedProvider([textResponse("approved and done")]),
      permissions: asking(),
      runs,
      seen,
    });
    const result = await second.resume(copy, { decisions: { [id]: "allow" } });

    expect(result.status).toBe("completed");
    expect(result.output).toBe("approved and done");
    expect(runs).toEqual([id]);
    expect(seen).toEqual([{ toolCallId: id, content: "Results for odd", isError: false }]);
    expect(toolResults(result.messages)).toEqual([
      { type: "tool_result", toolCallId: id, content: "Results for odd", isError: false },
    ]);
  });

  it("keeps waiting when only another call is decided, then takes its own decision", async () => {
    const runs: string[] = [];
    const seen: ToolResult[] = [];
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "search", input: { query: "odd" }, id },
          { name: "search", input: { query: "plain" }, id: "call_plain" },
        ]),
        textResponse("done"),
      ]),
      permissions: asking(),
      runs,
      seen,
    });
    await agent.run("go", { runId: "run-two" });

    // A decisions object without the odd id must not find one through Object.prototype.
    const partly = await agent.resume("run-two", { decisions: { call_plain: "allow" } });
    expect(partly.status).toBe("awaiting_approval");
    expect(partly.pending.map((each) => each.toolCallId)).toEqual([id]);
    expect(runs).toEqual([]);

    const result = await agent.resume(jsonCopy(agent.parked("run-two")), {
      decisions: { [id]: { decision: "deny", reason: "not this one" } },
    });

    expect(result.status).toBe("completed");
    expect(runs).toEqual(["call_plain"]);
    expect(toolResults(result.messages)).toEqual([
      {
        type: "tool_result",
        toolCallId: id,
        content: "Denied by reviewer: not this one",
        isError: true,
      },
      {
        type: "tool_result",
        toolCallId: "call_plain",
        content: "Results for plain",
        isError: false,
      },
    ]);
  });
});

describe("tool-call ids the engine refuses", () => {
  it("an empty id fails the run with a ProviderError naming the field", async () => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "search", input: { query: "x" }, id: "" }]),
      ]),
      runs: [],
      seen: [],
    });

    const result = await agent.run("go");

    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("ProviderError");
    expect(result.error?.code).toBe("provider_failed");
    expect(result.error?.message).toContain("toolCalls.0.id");
  });

  it("a decision for an id nothing waits for is refused, even one named like a prototype member", async () => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "search", input: { query: "x" }, id: "call_1" }]),
      ]),
      permissions: asking(),
      runs: [],
      seen: [],
    });
    await agent.run("go", { runId: "run-refuse" });

    for (const stranger of ["__proto__", "constructor", "toString"]) {
      await expect(
        agent.resume("run-refuse", { decisions: { [stranger]: "allow" } }),
      ).rejects.toMatchObject({ code: "tool_call_not_found" });
    }
    expect(agent.parkedRunIds()).toEqual(["run-refuse"]);
  });
});
