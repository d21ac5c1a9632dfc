import { z } from "zod";
import { ConfigError } from "../../core/errors.js";
import { lazySchema } from "../../core/lazy-schema.js";
import { describeIssues } from "../../tools/validate.js";
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

const isFunction = (value: unknown) => typeof value === "function";
const aFunction = () => z.custom<unknown>(isFunction, "must be a function");
const FlightRecorderOptionsShape = lazySchema(() =>
  z.strictObject({
    redact: aFunction().optional(),
    sink: z.object({ append: aFunction(), entries: aFunction() }).loose().optional(),
  }),
);

/** A copy of `value` with `redact` applied to every string in it. */
function redacted(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((each) => redacted(each, redact));
  const copy: Record<string, unknown> = {};
  for (const [key, each] of Object.entries(value)) copy[key] = redacted(each, redact);
  return copy;
}

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
  readonly #redact: ((text: string) => string) | undefined;
  #sink: RecorderSink;
  // Successive requests of a run share their messages (values are immutable by contract), so
  // each message and tool list is redacted once: recording costs what is new, not the square.
  readonly #redactedOnce = new WeakMap<object, unknown>();

  constructor(options: FlightRecorderOptions = {}) {
    const parsed = FlightRecorderOptionsShape.safeParse(options);
    if (!parsed.success) {
      throw new ConfigError(
        `Invalid FlightRecorder options: ${describeIssues(parsed.error.issues)}`,
      );
    }
    this.#redact = options.redact;
    this.#sink = options.sink ?? memoryRecorderSink();
  }

  /**
   * Stores one entry, redacted. The engine calls this. Without `redact` the entry's values are
   * stored as they are: run values are immutable by contract, and readers get copies.
   */
  async record(entry: RecorderEntry): Promise<void> {
    await this.#sink.append(entry.runId, this.#redactEntry(entry));
  }

  #redactEntry(entry: RecorderEntry): RecorderEntry {
    const redact = this.#redact;
    if (redact === undefined) return entry;
    const once = <T extends object>(value: T): T => {
      let copy = this.#redactedOnce.get(value);
      if (copy === undefined) {
        copy = redacted(value, redact);
        this.#redactedOnce.set(value, copy);
      }
      return copy as T;
    };
    if (entry.type === "llm_request") {
      const { request, ...rest } = entry;
      const { messages, tools, ...settings } = request;
      return {
        ...(redacted(rest, redact) as typeof rest),
        request: {
          ...(redacted(settings, redact) as typeof settings),
          messages: messages.map(once),
          tools: once(tools),
        },
      };
    }
    if (entry.type === "run_start") {
      const { input, ...rest } = entry;
      return { ...(redacted(rest, redact) as typeof rest), input: input.map(once) };
    }
    return redacted(entry, redact) as RecorderEntry;
  }

  /**
   * Where entries go from now on (and are read from). A durable runtime passes one that keeps
   * them with each run's record, so that any process reads a run's recording.
   */
  useSink(sink: RecorderSink): void {
    this.#sink = sink;
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
