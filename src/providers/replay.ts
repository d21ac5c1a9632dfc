import { ConfigError, HarnessError } from "../core/errors.js";
import type { Provider, ProviderRequest } from "../core/provider.js";
import type { ProviderResponse, ToolResult, ToolSchema } from "../core/values.js";
import { RecorderEntry } from "../features/recorder/entry.js";
import { describeIssues } from "../tools/validate.js";

/** A replayed run asked for something the recording does not hold. */
export class ReplayDivergenceError extends HarnessError {
  override name = "ReplayDivergenceError";
  /** The 1-based provider call that diverged. */
  readonly call: number;

  constructor(call: number, message: string) {
    super("replay_diverged", message, { phase: "provider" });
    this.call = call;
  }
}

interface RecordedTurn {
  request: ProviderRequest | undefined;
  response: ProviderResponse;
}

/** What a recording gives a replay: its model turns and its raw tool results. */
interface Recorded {
  turns: RecordedTurn[];
  /** The first raw result of each call, by `resultKey`. */
  results: Map<string, ToolResult>;
}

/** A raw result's key: the provider call whose response asked for it, and the call's id. */
const resultKey = (iteration: number, toolCallId: string): string => `${iteration}:${toolCallId}`;

function recordedOf(entries: readonly RecorderEntry[]): Recorded {
  const results = new Map<string, ToolResult>();
  for (const entry of entries) {
    if (entry.type !== "tool_result_raw") continue;
    const key = resultKey(entry.iteration, entry.toolCall.id);
    // A step delivered again may have recorded a call twice: the first is the one used.
    if (!results.has(key)) results.set(key, entry.result);
  }
  return { turns: turnsOf(entries), results };
}

/** Each raw response, with the request recorded just before it. */
function turnsOf(entries: readonly RecorderEntry[]): RecordedTurn[] {
  const turns: RecordedTurn[] = [];
  let request: ProviderRequest | undefined;
  for (const entry of entries) {
    if (entry.type === "llm_request") request = entry.request;
    if (entry.type === "llm_response_raw") {
      turns.push({ request, response: entry.response });
      request = undefined;
    }
  }
  return turns;
}

const describeTools = (tools: readonly ToolSchema[]) =>
  `[${tools.map((each) => each.name).join(", ")}]`;

/** The first difference between two tool lists, in words; undefined when they are the same. */
function toolDifference(
  recorded: readonly ToolSchema[],
  sent: readonly ToolSchema[],
): string | undefined {
  const names = (tools: readonly ToolSchema[]) => tools.map((each) => each.name).join("\n");
  if (names(recorded) !== names(sent)) {
    return `the tool list differs: recorded ${describeTools(recorded)}, sent ${describeTools(sent)}`;
  }
  const changed = recorded.find(
    (each, index) => JSON.stringify(each) !== JSON.stringify(sent[index]),
  );
  return changed === undefined
    ? undefined
    : `the schema of tool "${changed.name}" differs from the recorded one`;
}

/**
 * Replays the model side of a flight recording: its raw responses, in order. A run that makes
 * more provider calls than were recorded, or sends a different tool list, fails with a
 * `ReplayDivergenceError` naming the first divergence. Replay with other middleware to debug a
 * production run offline. Tools run their handlers again, except agent tools (`agent.asTool`):
 * their calls take the child's result the recording holds, so no child runs.
 * @example
 * const provider = ReplayProvider.fromRecording(await recorder.entries(runId));
 * const result = await new Agent({ provider, tools }).run(input);
 */
export class ReplayProvider implements Provider {
  readonly name = "replay";
  readonly #recorded: Promise<Recorded>;
  /** The raw tool results, once the first call has read the recording. */
  #results = new Map<string, ToolResult>();
  #next = 0;

  private constructor(entries: Promise<readonly RecorderEntry[]>) {
    this.#recorded = entries.then(recordedOf);
    // Rejections surface on the first call; do not report them as unhandled before it.
    this.#recorded.catch(() => {});
  }

  /** From recorder entries (or the promise `recorder.entries(runId)` returns). */
  static fromRecording(
    entries: readonly RecorderEntry[] | Promise<readonly RecorderEntry[]>,
  ): ReplayProvider {
    return new ReplayProvider(Promise.resolve(entries));
  }

  /** From a recording exported with `exportJsonl`; each line is checked. */
  static fromJsonl(jsonl: string): ReplayProvider {
    return ReplayProvider.fromRecording(parseRecording(jsonl));
  }

  /** Provider calls answered so far. */
  get callCount(): number {
    return this.#next;
  }

  async complete(
    request: ProviderRequest,
    options: { signal?: AbortSignal } = {},
  ): Promise<ProviderResponse> {
    options.signal?.throwIfAborted();
    const { turns, results } = await this.#recorded;
    this.#results = results;
    const call = ++this.#next;
    const turn = turns[call - 1];
    if (turn === undefined) {
      throw new ReplayDivergenceError(
        call,
        `Replay diverged at provider call ${call}: the recording holds ${turns.length} response(s).`,
      );
    }
    const difference = turn.request && toolDifference(turn.request.tools, request.tools);
    if (difference !== undefined) {
      throw new ReplayDivergenceError(
        call,
        `Replay diverged at provider call ${call}: ${difference}.`,
      );
    }
    return structuredClone(turn.response);
  }

  /** The recorded raw result of call `toolCallId` of the last response given, if any. */
  recordedToolResult(toolCallId: string): ToolResult | undefined {
    const result = this.#results.get(resultKey(this.#next, toolCallId));
    return result === undefined ? undefined : structuredClone(result);
  }

  /** Throws unless every recorded response was replayed. */
  async assertComplete(): Promise<void> {
    const { turns } = await this.#recorded;
    if (this.#next < turns.length) {
      throw new ReplayDivergenceError(
        this.#next + 1,
        `Replay ended after ${this.#next} provider call(s); the recording holds ${turns.length}.`,
      );
    }
  }
}

/** Parses a JSONL recording, naming the first line that is not a recorder entry. */
export function parseRecording(jsonl: string): RecorderEntry[] {
  return jsonl
    .split("\n")
    .map((line, index) => ({ line: line.trim(), number: index + 1 }))
    .filter(({ line }) => line !== "")
    .map(({ line, number }) => {
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (error) {
        throw new ConfigError(`Recording line ${number} is not JSON.`, { cause: error });
      }
      const parsed = RecorderEntry.safeParse(json);
      if (!parsed.success) {
        throw new ConfigError(
          `Recording line ${number} is not a recorder entry: ${describeIssues(parsed.error.issues)}`,
        );
      }
      return parsed.data;
    });
}
