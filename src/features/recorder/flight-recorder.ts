import { ConfigError } from "../../core/errors.js";
import type { RecorderEntry, RunRecorder } from "./entry.js";
import { memoryRecorderSink, type RecorderSink } from "./recorder-sink.js";

export interface FlightRecorderOptions {
  /**
   * Applied to every string in an entry before it is stored (message text, tool inputs and
   * results, the system prompt): what it removes never reaches the recording or its exports.
   */
  redact?: (text: string) => string;
  /** Where entries are kept. @defaultValue `memoryRecorderSink()` */
  sink?: RecorderSink;
}

/** A copy of `value` with `redact` applied to every string in it. */
function redacted(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((each) => redacted(each, redact));
  if (typeof value === "object" && value !== null) {
    const copy: Record<string, unknown> = {};
    for (const [key, each] of Object.entries(value)) copy[key] = redacted(each, redact);
    return copy;
  }
  return value;
}

const unchanged = (text: string) => text;

/**
 * Records what a run sent and received, raw: each provider request as sent, each response
 * before response middleware, each tool result before result middleware, the decisions on
 * every call and the errors, in order. Replay a recording with `ReplayProvider.fromRecording`.
 * @example
 * const recorder = new FlightRecorder({ redact: (text) => text.replaceAll(apiKey, "[redacted]") });
 * const agent = new Agent({ provider, recorder });
 * const { runId } = await agent.run("…");
 * await writeFile("run.jsonl", await recorder.exportJsonl(runId));
 */
export class FlightRecorder implements RunRecorder {
  readonly #redact: (text: string) => string;
  readonly #sink: RecorderSink;

  constructor(options: FlightRecorderOptions = {}) {
    if (typeof options !== "object" || options === null) {
      throw new ConfigError("FlightRecorder options must be an object.");
    }
    if (options.redact !== undefined && typeof options.redact !== "function") {
      throw new ConfigError("FlightRecorder redact: must be a function (text) => text.");
    }
    this.#redact = options.redact ?? unchanged;
    this.#sink = options.sink ?? memoryRecorderSink();
  }

  /** Stores one entry, redacted. The engine calls this; so may tests. */
  async record(entry: RecorderEntry): Promise<void> {
    await this.#sink.append(entry.runId, redacted(entry, this.#redact) as RecorderEntry);
  }

  /** The run's entries, in order. */
  async entries(runId: string): Promise<RecorderEntry[]> {
    return this.#sink.entries(runId);
  }

  /** The run's entries as JSON Lines: one entry per line, each line ending in `\n`. */
  async exportJsonl(runId: string): Promise<string> {
    const entries = await this.#sink.entries(runId);
    return entries.map((entry) => `${JSON.stringify(entry)}\n`).join("");
  }
}
