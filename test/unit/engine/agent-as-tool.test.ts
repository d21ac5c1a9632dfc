import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  type ContentBlock,
  FlightRecorder,
  HookEvent,
  Middleware,
  PermissionManager,
  type Provider,
  type ProviderRequest,
  ReplayProvider,
  type RunEvent,
  type RunResult,
  type ToolCall,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { silent } from "../../support/silent.js";

type ToolResultBlock = Extract<ContentBlock, { type: "tool_result" }>;

const makeAgent = (options: AgentOptions): Agent => new Agent({ logger: silent, ...options });

const toolResults = (result: RunResult): ToolResultBlock[] =>
  result.messages
    .flatMap((message) => message.content)
    .filter((block): block is ToolResultBlock => block.type === "tool_result");

const lastUserText = (request: ProviderRequest): string => {
  const block = request.messages.at(-1)?.content.at(-1);
  return block?.type === "text" ? block.text : "";
};

describe("agent.asTool in direct runs", () => {
  it("runs the child inline and gives its output as the call's result", async () => {
    const childModel = new ScriptedProvider([
      (request) => textResponse(`notes on ${lastUserText(request)}`),
    ]);
    const researcher = makeAgent({ provider: childModel, config: { name: "researcher" } });
    const leadModel = new ScriptedProvider([
      toolCallResponse([{ name: "research", input: { input: "otters" } }]),
      textResponse("done"),
    ]);
    const lead = makeAgent({
      provider: leadModel,
      config: { name: "lead" },
      tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
    });
    const result = await lead.run("write about otters");
    expect(result.status).toBe("completed");
    expect(toolResults(result)).toEqual([
      { type: "tool_result", toolCallId: "call_1", content: "notes on otters", isError: false },
    ]);
    expect(childModel.requests).toHaveLength(1);
    expect(leadModel.requests[0]?.tools.map((each) => each.name)).toEqual(["research"]);
    expect(leadModel.requests[0]?.tools[0]?.inputSchema).toMatchObject({
      properties: { input: { type: "string" } },
      required: ["input"],
    });
  });

  it("names the tool after the agent by default and passes a custom input as JSON", async () => {
    const childModel = new ScriptedProvider([(request) => textResponse(lastUserText(request))]);
    const researcher = makeAgent({ provider: childModel, config: { name: "researcher" } });
    const asTool = researcher.asTool({
      description: "Research",
      input: z.object({ topic: z.string(), depth: z.number() }),
    });
    expect(asTool.name).toBe("researcher");
    const lead = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "researcher", input: { topic: "otters", depth: 2 } }]),
        textResponse("done"),
      ]),
      tools: [asTool],
    });
    const result = await lead.run("go");
    expect(toolResults(result)[0]?.content).toBe('{"topic":"otters","depth":2}');
  });

  it("uses the child agent's own middleware, hooks and permissions", async () => {
    const seenByChildMiddleware: string[] = [];
    class Watch extends Middleware {
      override async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
        seenByChildMiddleware.push(call.name);
        return call;
      }
    }
    const childEvents: string[] = [];
    const childModel = new ScriptedProvider([
      toolCallResponse([{ name: "research", input: { input: "deeper" } }]),
      textResponse("child done"),
    ]);
    const grandchild = makeAgent({
      provider: new ScriptedProvider([textResponse("unused")]),
      config: { name: "grandchild" },
    });
    const child = makeAgent({
      provider: childModel,
      config: { name: "child" },
      middleware: [new Watch()],
      tools: [grandchild.asTool({ name: "research", description: "More" })],
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "research", decision: "deny" }],
      }),
    });
    child.hooks.on(HookEvent.AGENT_START, () => {
      childEvents.push("start");
    });
    const lead = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "child", input: { input: "go" } }]),
        textResponse("lead done"),
      ]),
      tools: [child.asTool({ description: "A child" })],
    });
    const result = await lead.run("go");
    expect(result.status).toBe("completed");
    expect(toolResults(result).at(-1)?.content).toBe("child done");
    expect(childEvents).toEqual(["start"]);
    expect(seenByChildMiddleware).toEqual(["research"]);
    // The child's policy denied its own call: the grandchild never ran.
    const childConversation = childModel.requests[1]?.messages ?? [];
    const denied = childConversation
      .flatMap((message) => message.content)
      .find((block) => block.type === "tool_result");
    expect(denied).toMatchObject({ isError: true });
  });

  it("gives an error result with the child's code when the child fails", async () => {
    const failing = makeAgent({ config: { name: "failing" } }); // no provider
    const lead = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "failing", input: { input: "x" } }]),
        textResponse("recovered"),
      ]),
      tools: [failing.asTool({ description: "Fails" })],
    });
    const result = await lead.run("go");
    expect(result.status).toBe("completed");
    const [call] = toolResults(result);
    expect(call?.isError).toBe(true);
    expect(call?.content).toContain("provider_missing");
    expect(call?.content).toContain("call_1");
  });

  it("refuses a call deeper than maxDepth with depth_exceeded", async () => {
    // An agent that calls itself: each run starts a child until the depth limit stops it.
    const model = new ScriptedProvider(
      [
        (request) =>
          request.messages.some((message) =>
            message.content.some((block) => block.type === "tool_result"),
          )
            ? textResponse("up")
            : toolCallResponse([{ name: "recurse", input: { input: "again" } }]),
      ],
      { loop: true },
    );
    const recursive: Agent = makeAgent({
      provider: model,
      config: { name: "recursive", maxDepth: 2 },
    });
    recursive.tools.register(recursive.asTool({ name: "recurse", description: "Itself" }));
    const result = await recursive.run("start");
    expect(result.status).toBe("completed");
    // depth 0 → 1 → 2 run; the call from depth 2 is refused.
    const deepest = model.requests
      .flatMap((request) => request.messages)
      .flatMap((message) => message.content)
      .filter((block): block is ToolResultBlock => block.type === "tool_result")
      .find((block) => block.isError);
    expect(deepest?.content).toContain("depth_exceeded");
    expect(model.requests.filter((request) => request.messages.length === 1)).toHaveLength(3);
  });

  it("gives an error result for input that fails the child's input schema", async () => {
    const childModel = new ScriptedProvider([]);
    const child = makeAgent({ provider: childModel, config: { name: "child" } });
    const lead = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "child", input: { wrong: 1 } }]),
        textResponse("ok"),
      ]),
      tools: [child.asTool({ description: "A child" })],
    });
    const result = await lead.run("go");
    expect(toolResults(result)[0]).toMatchObject({ isError: true });
    expect(toolResults(result)[0]?.content).toContain("Invalid input");
    expect(childModel.requests).toHaveLength(0);
  });

  it("cancels the child with its parent and reports it cancelled", async () => {
    const controller = new AbortController();
    const child = makeAgent({
      provider: {
        name: "slow",
        complete: (_request, options) =>
          new Promise((_resolve, reject) => {
            controller.abort();
            options?.signal?.addEventListener("abort", () => reject(options.signal?.reason));
          }),
      },
      config: { name: "child" },
    });
    const lead = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "child", input: { input: "x" } }]),
      ]),
      tools: [child.asTool({ description: "A child" })],
    });
    const result = await lead.run("go", { signal: controller.signal });
    expect(result.status).toBe("cancelled");
  });

  it("streams child_started and child_finished on the parent's events, as a durable parent's", async () => {
    const researcher = makeAgent({
      provider: new ScriptedProvider([
        (request) => textResponse(`notes on ${lastUserText(request)}`),
      ]),
      config: { name: "researcher" },
    });
    const failing = makeAgent({ config: { name: "failing" } }); // no provider
    const lead = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "research", input: { input: "otters" } }]),
        toolCallResponse([{ name: "failing", input: { input: "x" }, id: "call_2" }]),
        textResponse("done"),
      ]),
      config: { name: "lead" },
      tools: [
        researcher.asTool({ name: "research", description: "Research one topic" }),
        failing.asTool({ description: "Fails" }),
      ],
    });
    const events: RunEvent[] = [];
    for await (const event of lead.runStream("go", { runId: "run-1" })) events.push(event);
    const sequence = events
      .filter((event) => event.type !== "text_delta" && event.type !== "thinking_delta")
      .map((event) =>
        event.type === "tool_start" || event.type === "tool_end" ? event.type : event,
      );
    expect(sequence.slice(0, -1)).toEqual([
      "tool_start",
      {
        type: "child_started",
        childRunId: "run-1.call_1",
        agent: "researcher",
        toolCallId: "call_1",
      },
      {
        type: "child_finished",
        childRunId: "run-1.call_1",
        agent: "researcher",
        toolCallId: "call_1",
        status: "completed",
      },
      "tool_end",
      "tool_start",
      { type: "child_started", childRunId: "run-1.call_2", agent: "failing", toolCallId: "call_2" },
      {
        type: "child_finished",
        childRunId: "run-1.call_2",
        agent: "failing",
        toolCallId: "call_2",
        status: "failed",
      },
      "tool_end",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "result", result: { status: "completed" } });
  });

  it("records each child's result on the parent, so a replay of the parent runs no child", async () => {
    const recorder = new FlightRecorder();
    const researcher = makeAgent({
      provider: new ScriptedProvider([
        (request) => textResponse(`notes on ${lastUserText(request)}`),
      ]),
      config: { name: "researcher" },
    });
    const failing = makeAgent({ config: { name: "failing" } }); // no provider
    const leadTurns = () => [
      toolCallResponse([
        { name: "research", input: { input: "otters" }, id: "call_1" },
        { name: "failing", input: { input: "x" }, id: "call_2" },
      ]),
      textResponse("done"),
    ];
    const lead = makeAgent({
      provider: new ScriptedProvider(leadTurns()),
      config: { name: "lead" },
      recorder,
      tools: [
        researcher.asTool({ name: "research", description: "Research one topic" }),
        failing.asTool({ description: "Fails" }),
      ],
    });
    const recorded = await lead.run("write about otters", { runId: "run-1" });
    const raw = (await recorder.entries("run-1")).filter(
      (entry) => entry.type === "tool_result_raw",
    );
    expect(raw.map((entry) => ({ type: "tool_result", ...entry.result }))).toEqual(
      toolResults(recorded),
    );
    expect(toolResults(recorded).map((block) => block.isError)).toEqual([false, true]);

    // The replay's children have models that must not be called: their results come from the recording.
    const noModel = (): Provider => ({
      name: "unreachable",
      complete: async () => {
        throw new Error("a child ran during the replay");
      },
    });
    const replayedResearcher = makeAgent({ provider: noModel(), config: { name: "researcher" } });
    const replayedFailing = makeAgent({ provider: noModel(), config: { name: "failing" } });
    const provider = ReplayProvider.fromRecording(recorder.entries("run-1"));
    const replay = makeAgent({
      provider,
      config: { name: "lead" },
      tools: [
        replayedResearcher.asTool({ name: "research", description: "Research one topic" }),
        replayedFailing.asTool({ description: "Fails" }),
      ],
    });
    const replayed = await replay.run("write about otters", { runId: "run-1" });
    expect(replayed.status).toBe("completed");
    expect(replayed.output).toBe("done");
    expect(toolResults(replayed)).toEqual(toolResults(recorded));
    await provider.assertComplete();
  });
});
