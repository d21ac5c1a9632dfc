import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { ConfigError } from "../core/errors.js";
import type { Provider } from "../core/provider.js";
import type { JsonValue, RunResult, ToolCall } from "../core/values.js";
import type { Agent } from "../engine/agent.js";
import type { RecorderEntry } from "../features/recorder/entry.js";
import { parseRecording, ReplayProvider } from "../providers/replay.js";
import { clip, describeContent } from "./run-format.js";

export interface ReplayCommandOptions {
  /** A JSONL recording, as `recorder.exportJsonl(runId)` wrote it. */
  file: string;
  /** A module whose `createAgent` (or default) export builds the agent around a provider. */
  agent?: string;
  json: boolean;
}

/** One line per entry: what a person reading the recording wants first. */
function describeEntry(entry: RecorderEntry): string {
  switch (entry.type) {
    case "run_start":
      return `run_start         agent "${entry.agent}", session ${entry.sessionId}, ${entry.input.length} message(s)`;
    case "llm_request":
      return `llm_request #${entry.iteration}    ${entry.request.messages.length} message(s), tools [${entry.request.tools.map((each) => each.name).join(", ")}]`;
    case "llm_response_raw":
      return `llm_response_raw #${entry.iteration} ${describeContent(entry.response.content)} (${entry.response.stopReason})`;
    case "decision":
      return `decision          ${entry.toolCallId} ${entry.name}: ${entry.decision} (${entry.source}${entry.by === undefined ? "" : ` by ${entry.by}`}) ${entry.reason}`.trimEnd();
    case "tool_result_raw":
      return `tool_result_raw   ${entry.toolCall.id} ${entry.toolCall.name} -> ${entry.result.isError ? "error " : ""}${JSON.stringify(clip(entry.result.content))}`;
    case "error":
      return `error             ${entry.error.name} in ${entry.error.phase ?? "run"}: ${entry.error.message}`;
    case "run_end":
      return `run_end           ${entry.status}${entry.output === null ? "" : `: ${JSON.stringify(clip(textOfOutput(entry.output)))}`}`;
  }
}

/** A structured output (`config.output`) as its JSON text; a final text as it is. */
const textOfOutput = (output: JsonValue): string =>
  typeof output === "string" ? output : JSON.stringify(output);

type AgentFactory = (provider: Provider) => Agent | Promise<Agent>;

async function loadFactory(path: string): Promise<AgentFactory> {
  const module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  const exported = module.createAgent ?? module.default;
  if (typeof exported !== "function") {
    throw new ConfigError(
      `${path} must export \`createAgent\` (or a default export): a function (provider) => Agent.`,
    );
  }
  return exported as AgentFactory;
}

const toolCallsOf = (result: RunResult): ToolCall[] =>
  result.messages.flatMap((message) =>
    message.content.flatMap((block) =>
      block.type === "tool_use" ? [{ id: block.id, name: block.name, input: block.input }] : [],
    ),
  );

/**
 * `harnessx replay FILE.jsonl [--agent module]`: prints the recording's timeline, or (with an
 * agent module) runs that agent on the recorded input against the recorded model responses and
 * compares the outcome. Returns the exit code: 1 when the replayed run failed (a divergence).
 */
export async function runReplay(options: ReplayCommandOptions): Promise<number> {
  const entries = parseRecording(await readFile(options.file, "utf8"));
  const start = entries.find((entry) => entry.type === "run_start");
  const end = entries.find((entry) => entry.type === "run_end");
  const runId = entries[0]?.runId ?? "(empty)";
  if (options.agent === undefined) {
    if (options.json) console.log(JSON.stringify({ runId, entries }));
    else {
      console.log(`recording of run ${runId}: ${entries.length} entries`);
      for (const entry of entries) console.log(`  ${describeEntry(entry)}`);
    }
    return 0;
  }
  if (start === undefined) {
    throw new ConfigError(`${options.file} has no run_start entry: the input is unknown.`);
  }
  const provider = ReplayProvider.fromRecording(entries);
  const agent = await (await loadFactory(options.agent))(provider);
  let result: RunResult;
  try {
    result = await agent.run(start.input, { sessionId: start.sessionId });
  } finally {
    await agent.close();
  }
  const recordedCalls = entries.flatMap((entry) =>
    entry.type === "llm_response_raw" ? entry.response.toolCalls : [],
  );
  const report = {
    runId,
    replayed: {
      status: result.status,
      output: result.output,
      error: result.error,
      modelCalls: provider.callCount,
    },
    recorded: { status: end?.status ?? null, output: end?.output ?? null },
    sameOutput: end !== undefined && isDeepStrictEqual(end.output, result.output),
    sameToolCalls: JSON.stringify(toolCallsOf(result)) === JSON.stringify(recordedCalls),
  };
  if (options.json) console.log(JSON.stringify(report));
  else {
    const outcome = (status: string | null, output: JsonValue) =>
      `${status ?? "unknown"}${output === null ? "" : `: ${JSON.stringify(output)}`}`;
    console.log(`replaying run ${runId} with agent "${agent.name}"`);
    console.log(`replayed: ${outcome(result.status, result.output)}`);
    if (result.error !== null) console.log(`  ${result.error.name}: ${result.error.message}`);
    console.log(`recorded: ${outcome(report.recorded.status, report.recorded.output)}`);
    console.log(`output: ${report.sameOutput ? "same" : "differs"}`);
    console.log(`tool calls: ${report.sameToolCalls ? "same" : "differ"}`);
  }
  return result.status === "failed" ? 1 : 0;
}
