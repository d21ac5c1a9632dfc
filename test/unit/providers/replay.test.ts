import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  ConfigError,
  FlightRecorder,
  Middleware,
  type Provider,
  type ProviderRequest,
  type ProviderResponse,
  type RecorderEntry,
  ReplayDivergenceError,
  ReplayProvider,
  type RunResult,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { silent } from "../../support/silent.js";

const weather = tool({
  name: "weather",
  description: "Forecast for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => `${city}: sunny`,
});
const stocks = tool({
  name: "stocks",
  description: "A quote.",
  input: z.object({ symbol: z.string() }),
  handler: async ({ symbol }) => `${symbol}: 42`,
});

class Polite extends Middleware {
  override async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
    return {
      ...response,
      content: response.content.map((block) =>
        block.type === "text" ? { ...block, text: `${block.text} Thank you.` } : block,
      ),
    };
  }
}

const model = () =>
  new ScriptedProvider([
    toolCallResponse([
      { name: "weather", input: { city: "Porto" }, id: "w1" },
      { name: "stocks", input: { symbol: "HX" }, id: "s1" },
    ]),
    toolCallResponse([{ name: "weather", input: { city: "Lisbon" }, id: "w2" }]),
    textResponse("Porto and Lisbon are sunny; HX is at 42."),
  ]);

const build = (provider: Provider, options: AgentOptions = {}) =>
  new Agent({
    provider,
    tools: [weather, stocks],
    middleware: [new Polite()],
    logger: silent,
    ...options,
  });

async function recordRun(): Promise<{ entries: RecorderEntry[]; result: RunResult }> {
  const recorder = new FlightRecorder();
  const agent = build(model(), { recorder });
  const result = await agent.run("Weather and quote?");
  return { entries: await recorder.entries(result.runId), result };
}

const toolCallsOf = (result: RunResult) =>
  result.messages.flatMap((message) =>
    message.content.flatMap((block) => (block.type === "tool_use" ? [block] : [])),
  );

const request = (tools: ProviderRequest["tools"]): ProviderRequest => ({
  system: "",
  messages: [],
  tools,
  model: "default",
  maxTokens: 10,
  temperature: 1,
  stream: false,
  prefixKey: null,
});

function firstRequestOf(entries: readonly RecorderEntry[]): ProviderRequest {
  const found = entries.find((entry) => entry.type === "llm_request");
  if (found?.type !== "llm_request") throw new Error("expected a request");
  return found.request;
}

describe("ReplayProvider", () => {
  it("replays a recorded run to the same output, tool calls and messages", async () => {
    const { entries, result: recorded } = await recordRun();
    expect(recorded.status).toBe("completed");
    const replay = ReplayProvider.fromRecording(entries);
    const replayed = await build(replay).run("Weather and quote?");
    expect(replayed.status).toBe("completed");
    expect(replayed.output).toBe(recorded.output);
    expect(toolCallsOf(replayed)).toEqual(toolCallsOf(recorded));
    expect(replayed.messages).toEqual(recorded.messages);
    expect(replay.callCount).toBe(3);
    await replay.assertComplete();
  });

  it("takes the promise recorder.entries() returns, and a JSONL export", async () => {
    const recorder = new FlightRecorder();
    const first = await build(model(), { recorder }).run("Weather and quote?");
    const fromPromise = await build(
      ReplayProvider.fromRecording(recorder.entries(first.runId)),
    ).run("Weather and quote?");
    const fromJsonl = await build(
      ReplayProvider.fromJsonl(await recorder.exportJsonl(first.runId)),
    ).run("Weather and quote?");
    expect(fromPromise.output).toBe(first.output);
    expect(fromJsonl.output).toBe(first.output);
  });

  it("replays the raw responses: other middleware gives other processed output", async () => {
    const { entries, result: recorded } = await recordRun();
    const withoutMiddleware = await new Agent({
      provider: ReplayProvider.fromRecording(entries),
      tools: [weather, stocks],
      logger: silent,
    }).run("Weather and quote?");
    expect(recorded.output).toBe("Porto and Lisbon are sunny; HX is at 42. Thank you.");
    expect(withoutMiddleware.output).toBe("Porto and Lisbon are sunny; HX is at 42.");
    expect(toolCallsOf(withoutMiddleware)).toEqual(toolCallsOf(recorded));
  });

  it("fails loudly, naming the call, when the run asks for more than was recorded", async () => {
    const { entries } = await recordRun();
    const cut = entries.slice(
      0,
      entries.findLastIndex((entry) => entry.type === "llm_request"),
    );
    const result = await build(ReplayProvider.fromRecording(cut)).run("Weather and quote?");
    expect(result.status).toBe("failed");
    expect(result.error).toEqual({
      name: "ReplayDivergenceError",
      code: "replay_diverged",
      message: "Replay diverged at provider call 3: the recording holds 2 response(s).",
      phase: "provider",
    });
  });

  it("fails loudly when the run sends a different tool list", async () => {
    const { entries } = await recordRun();
    const result = await new Agent({
      provider: ReplayProvider.fromRecording(entries),
      tools: [weather],
      logger: silent,
    }).run("Weather and quote?");
    expect(result.status).toBe("failed");
    expect(result.error?.name).toBe("ReplayDivergenceError");
    expect(result.error?.message).toBe(
      "Replay diverged at provider call 1: the tool list differs: recorded [weather, stocks], sent [weather].",
    );
  });

  it("names a changed tool schema, and carries a code and the call number", async () => {
    const { entries } = await recordRun();
    const replay = ReplayProvider.fromRecording(entries);
    const firstRequest = firstRequestOf(entries);
    const changed = firstRequest.tools.map((each) =>
      each.name === "stocks" ? { ...each, description: "Another description." } : each,
    );
    const failure = await replay.complete(request(changed)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ReplayDivergenceError);
    expect(failure).toMatchObject({
      code: "replay_diverged",
      call: 1,
      message:
        'Replay diverged at provider call 1: the schema of tool "stocks" differs from the recorded one.',
    });
  });

  it("says when responses were left unreplayed", async () => {
    const { entries } = await recordRun();
    const replay = ReplayProvider.fromRecording(entries);
    const firstRequest = firstRequestOf(entries);
    await replay.complete(firstRequest);
    await expect(replay.assertComplete()).rejects.toThrow(
      "Replay ended after 1 provider call(s); the recording holds 3.",
    );
  });

  it("refuses a JSONL line that is not a recorder entry, naming the line", () => {
    expect(() => ReplayProvider.fromJsonl('{"type":"run_start"}\n')).toThrow(ConfigError);
    expect(() => ReplayProvider.fromJsonl('\n{"type":"run_start"}\n')).toThrow(
      /^Recording line 2 is not a recorder entry: /,
    );
    expect(() => ReplayProvider.fromJsonl("not json")).toThrow("Recording line 1 is not JSON.");
  });
});
