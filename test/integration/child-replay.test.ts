// A flight recording of a durable parent holds each child run's result (its agent tool's raw
// result, recorded when the parent takes it in), so a replay of the parent needs no children.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import {
  Agent,
  type ContentBlock,
  FlightRecorder,
  memoryBackend,
  type Provider,
  type ProviderRequest,
  ReplayProvider,
  type RunResult,
  redisBackend,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { Runtimes, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

type ToolResultBlock = Extract<ContentBlock, { type: "tool_result" }>;

const runtimes = new Runtimes();
const prefixes: string[] = [];

afterEach(async () => {
  await runtimes.closeAll();
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
});

const lastText = (request: ProviderRequest): string =>
  (request.messages.at(-1)?.content ?? [])
    .map((block) =>
      block.type === "text" ? block.text : block.type === "tool_result" ? block.content : "",
    )
    .join("");

/** Asks `research` about the user's text, then answers with what came back. Stateless. */
const leadModel = (): ScriptedProvider =>
  new ScriptedProvider(
    [
      (request) =>
        request.messages.at(-1)?.role === "tool"
          ? textResponse(`Report: ${lastText(request)}`)
          : toolCallResponse([{ name: "research", input: { input: lastText(request) } }]),
    ],
    { loop: true },
  );

/** A model a replay must never call: its agent's results come from the recording. */
const unreachable = (): Provider => ({
  name: "unreachable",
  complete: async () => {
    throw new Error("a child ran during the replay");
  },
});

const toolResults = (result: RunResult): ToolResultBlock[] =>
  result.messages
    .flatMap((message) => message.content)
    .filter((block): block is ToolResultBlock => block.type === "tool_result");

/** The lead and its researcher, the child it runs through `research`. */
function agents(researcherProvider: Provider, leadProvider: Provider, recorder?: FlightRecorder) {
  const researcher = new Agent({
    provider: researcherProvider,
    logger: silent,
    config: { name: "researcher" },
  });
  const lead = new Agent({
    provider: leadProvider,
    logger: silent,
    config: { name: "lead" },
    ...(recorder === undefined ? {} : { recorder }),
    tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
  });
  return { lead, researcher };
}

describe.each([
  { name: "memoryBackend()", backend: (): RunBackend => memoryBackend() },
  {
    name: "redisBackend()",
    backend: (): RunBackend => {
      const prefix = uniquePrefix();
      prefixes.push(prefix);
      return redisBackend({ url: redisUrl(), prefix });
    },
  },
])("replaying a durable parent on $name", ({ name, backend }) => {
  beforeAll(async () => {
    if (name.startsWith("redis")) await requireRedis();
  });

  it("replays from the parent's recording alone: its child's result is in it", async () => {
    const researcherModel = new ScriptedProvider(
      [(request) => textResponse(`notes on ${lastText(request)}`)],
      { loop: true },
    );
    const { lead, researcher } = agents(researcherModel, leadModel(), new FlightRecorder());
    const runtime = await runtimes.start([lead, researcher], backend());
    const handle = await runtime.submit("lead", "otters");
    const result = await handle.result();
    expect(result.status).toBe("completed");
    expect(result.output).toBe("Report: notes on otters");
    expect(researcherModel.requests).toHaveLength(1);

    const recording = await runtime.recording(handle.runId);
    const raw = recording.filter((entry) => entry.type === "tool_result_raw");
    expect(raw).toHaveLength(1);
    expect(raw[0]).toMatchObject({
      toolCall: { name: "research", input: { input: "otters" } },
      result: { content: "notes on otters", isError: false },
    });

    // A direct run of the lead on the recorded responses, its researcher unable to run.
    const provider = ReplayProvider.fromRecording(recording);
    const start = recording.find((entry) => entry.type === "run_start");
    if (start?.type !== "run_start") throw new Error("no run_start entry");
    const replayed = await agents(unreachable(), provider).lead.run(start.input);
    expect(replayed.status).toBe("completed");
    expect(replayed.output).toBe(result.output);
    expect(toolResults(replayed).map(({ content, isError }) => ({ content, isError }))).toEqual(
      toolResults(result).map(({ content, isError }) => ({ content, isError })),
    );
    await provider.assertComplete();
  });
});
