import { ProviderError } from "../core/errors.js";
import type { Provider, ProviderRequest, ProviderStreamEvent } from "../core/provider.js";
import type { ContentBlock, ProviderResponse, ToolCall, Usage } from "../core/values.js";

/** One scripted model turn: a response, or a function of the request that makes one. */
export type ScriptedStep =
  | ProviderResponse
  | ((request: ProviderRequest, index: number) => ProviderResponse | Promise<ProviderResponse>);

export interface ScriptedProviderOptions {
  /** Replays the script from the start when it runs out, for benchmarks and demos. @defaultValue false */
  loop?: boolean;
  /** Splits streamed text into deltas of about this many characters. @defaultValue 8 */
  chunkSize?: number;
  name?: string;
}

const USAGE: Usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** A final text answer. */
export function textResponse(text: string, model = "scripted"): ProviderResponse {
  return {
    content: [{ type: "text", text }],
    toolCalls: [],
    stopReason: "end_turn",
    usage: USAGE,
    model,
  };
}

/** A response requesting tool calls; ids default to `call_<n>`. */
export function toolCallResponse(
  calls: ReadonlyArray<{ name: string; input: Record<string, unknown>; id?: string }>,
  options: { text?: string; model?: string } = {},
): ProviderResponse {
  const toolCalls: ToolCall[] = calls.map((call, index) => ({
    id: call.id ?? `call_${index + 1}`,
    name: call.name,
    input: call.input,
  }));
  const content: ContentBlock[] = [
    ...(options.text ? [{ type: "text" as const, text: options.text }] : []),
    ...toolCalls.map((call) => ({
      type: "tool_use" as const,
      id: call.id,
      name: call.name,
      input: call.input,
    })),
  ];
  return {
    content,
    toolCalls,
    stopReason: "tool_use",
    usage: USAGE,
    model: options.model ?? "scripted",
  };
}

/**
 * A fake model that answers from a script, for tests and demos. It fails loudly: a call past
 * the end of the script throws, and `assertComplete()` throws while steps are left unused.
 */
export class ScriptedProvider implements Provider {
  readonly name: string;
  /** Every request received, in order. */
  readonly requests: ProviderRequest[] = [];
  readonly #steps: readonly ScriptedStep[];
  readonly #loop: boolean;
  readonly #chunkSize: number;
  #next = 0;

  constructor(steps: readonly ScriptedStep[], options: ScriptedProviderOptions = {}) {
    this.#steps = steps;
    this.#loop = options.loop ?? false;
    this.#chunkSize = options.chunkSize ?? 8;
    this.name = options.name ?? "scripted";
  }

  get callCount(): number {
    return this.requests.length;
  }

  async complete(
    request: ProviderRequest,
    options: { signal?: AbortSignal } = {},
  ): Promise<ProviderResponse> {
    options.signal?.throwIfAborted();
    this.requests.push(request);
    if (this.#next >= this.#steps.length) {
      if (!this.#loop || this.#steps.length === 0) {
        throw new ProviderError(
          `ScriptedProvider: unexpected call ${this.#next + 1}; the script has ${this.#steps.length} step(s).`,
        );
      }
      this.#next = 0;
    }
    const index = this.#next++;
    const step = this.#steps[index] as ScriptedStep;
    return typeof step === "function" ? step(request, index) : step;
  }

  async *stream(
    request: ProviderRequest,
    options: { signal?: AbortSignal } = {},
  ): AsyncIterable<ProviderStreamEvent> {
    const response = await this.complete(request, options);
    for (const block of response.content) {
      if (block.type !== "text" && block.type !== "thinking") continue;
      for (let at = 0; at < block.text.length; at += this.#chunkSize) {
        options.signal?.throwIfAborted();
        const text = block.text.slice(at, at + this.#chunkSize);
        yield block.type === "text"
          ? { type: "text_delta", text }
          : { type: "thinking_delta", text };
      }
    }
    yield { type: "response", response };
  }

  /** Throws unless every scripted step was used. */
  assertComplete(): void {
    if (!this.#loop && this.#next < this.#steps.length) {
      throw new Error(
        `ScriptedProvider: ${this.#steps.length - this.#next} scripted step(s) were never used.`,
      );
    }
  }
}
