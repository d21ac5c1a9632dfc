import type Anthropic from "@anthropic-ai/sdk";
import type { OutputFormat, ProviderRequest, ProviderStreamEvent } from "../core/provider.js";
import type {
  ContentBlock,
  JsonValue,
  ProviderResponse,
  StopReason,
  Usage,
} from "../core/values.js";
import { answerFromFinalTool, finalToolParams } from "./anthropic-final-tool.js";
import { parseToolInput, responseOf, temperatureOf, usageOf } from "./response-parts.js";
import { requestOptionsOf, type CallContext as SdkCallContext } from "./sdk-client.js";
import { streamCutError, toProviderError } from "./sdk-errors.js";

type Params = Anthropic.Messages.MessageCreateParamsNonStreaming;
type BlockParam = Anthropic.Messages.ContentBlockParam;
type ApiMessage = Anthropic.Messages.Message;

const PROVIDER = "Anthropic";
const BREAKPOINT = { cache_control: { type: "ephemeral" as const } };

function blockOf(block: ContentBlock): BlockParam | undefined {
  switch (block.type) {
    // The API refuses empty text blocks.
    case "text":
      return block.text === "" ? undefined : { type: "text", text: block.text };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.toolCallId,
        content: block.content,
        ...(block.isError ? { is_error: true } : {}),
      };
    // A thinking block goes back only as the API gave it: with its signature, or redacted.
    case "thinking":
      return thinkingParam(block.text, block.providerData);
  }
}

/** What a thinking block keeps of the API's: its signature, or the redacted thinking's data. */
type ThinkingData = { signature: string } | { type: "redacted_thinking"; data: string };

function thinkingParam(text: string, data: unknown): BlockParam | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const {
    signature,
    type,
    data: redacted,
  } = data as {
    signature?: unknown;
    type?: unknown;
    data?: unknown;
  };
  if (type === "redacted_thinking" && typeof redacted === "string") {
    return { type: "redacted_thinking", data: redacted };
  }
  return typeof signature === "string"
    ? { type: "thinking", thinking: text, signature }
    : undefined;
}

const thinkingBlock = (text: string, data: ThinkingData): ContentBlock => ({
  type: "thinking",
  text,
  providerData: data as JsonValue,
});

// Tool results travel in user turns; consecutive turns of one role are merged into one.
function messagesOf(messages: ProviderRequest["messages"]): Anthropic.Messages.MessageParam[] {
  const turns: Array<{ role: "user" | "assistant"; content: BlockParam[] }> = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const content = message.content.map(blockOf).filter((block) => block !== undefined);
    if (content.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  }
  return turns;
}

// The last block of the conversation that may carry a breakpoint (thinking blocks may not).
function markLastBlock(turns: Anthropic.Messages.MessageParam[]): void {
  const content = turns.at(-1)?.content;
  if (!Array.isArray(content)) return;
  for (let index = content.length - 1; index >= 0; index--) {
    const block = content[index];
    if (block === undefined || block.type === "thinking" || block.type === "redacted_thinking") {
      continue;
    }
    content[index] = { ...block, ...BREAKPOINT } as BlockParam;
    return;
  }
}

/**
 * The Messages API request for a canonical request, `extraBody` merged over it. With a
 * `prefixKey`, cache breakpoints mark the end of the tools, of the system prompt and of the
 * conversation (a rolling one: each call of a loop reads the turns before it from the cache).
 */
export function messagesParams(
  request: ProviderRequest,
  model: string,
  extraBody?: Record<string, unknown>,
): Params {
  const cached = request.prefixKey !== null;
  const last = request.tools.length - 1;
  const messages = messagesOf(request.messages);
  if (cached) markLastBlock(messages);
  const params: Params = {
    model,
    max_tokens: request.maxTokens,
    messages,
    ...(request.system === ""
      ? {}
      : {
          system: cached ? [{ type: "text", text: request.system, ...BREAKPOINT }] : request.system,
        }),
    ...(request.tools.length === 0
      ? {}
      : {
          tools: request.tools.map((tool, index) => ({
            name: tool.name,
            description: tool.description,
            input_schema: { type: "object" as const, ...tool.inputSchema },
            ...(cached && index === last ? BREAKPOINT : {}),
          })),
        }),
    ...temperatureOf(request.temperature),
  };
  if (request.output !== undefined) {
    const { tool, ...choice } = finalToolParams(request.output, request.tools.length, extraBody);
    Object.assign(params, { tools: [...(params.tools ?? []), tool], ...choice });
  }
  return extraBody === undefined ? params : ({ ...params, ...extraBody } as Params);
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "end_turn",
  tool_use: "tool_use",
  max_tokens: "max_tokens",
  stop_sequence: "stop_sequence",
  refusal: "refusal",
  // A server tool's long turn paused: the model has finished speaking for now.
  pause_turn: "end_turn",
  model_context_window_exceeded: "max_tokens",
};

const stopOf = (reason: string | null | undefined): StopReason =>
  STOP_REASONS[reason ?? "end_turn"] ?? "end_turn";

// Anthropic's input_tokens already leaves out cache reads and writes.
function usageFrom(usage: {
  input_tokens: number | null;
  output_tokens: number;
  cache_read_input_tokens: number | null;
  cache_creation_input_tokens: number | null;
}): Usage {
  return usageOf(
    usage.input_tokens,
    usage.output_tokens,
    usage.cache_read_input_tokens,
    usage.cache_creation_input_tokens,
  );
}

function contentOf(blocks: readonly Anthropic.Messages.ContentBlock[]): ContentBlock[] {
  const content: ContentBlock[] = [];
  for (const block of blocks) {
    if (block.type === "text") content.push({ type: "text", text: block.text });
    else if (block.type === "thinking") {
      content.push(thinkingBlock(block.thinking, { signature: block.signature }));
    } else if (block.type === "redacted_thinking") {
      content.push(thinkingBlock("", { type: "redacted_thinking", data: block.data }));
    } else if (block.type === "tool_use") {
      content.push({
        type: "tool_use",
        id: block.id,
        name: block.name,
        input: (block.input ?? {}) as Record<string, unknown>,
      });
    }
  }
  return content;
}

/** The canonical response of a message. */
export function fromMessage(message: ApiMessage): ProviderResponse {
  return responseOf(
    contentOf(message.content),
    stopOf(message.stop_reason),
    usageFrom(message.usage),
    message.model,
    message.id,
  );
}

type CallContext = SdkCallContext<Anthropic>;

export async function completeMessages(
  params: Params,
  context: CallContext,
): Promise<ProviderResponse> {
  try {
    return fromMessage(
      await context.client.messages.create(params, requestOptionsOf(context.signal)),
    );
  } catch (error) {
    throw toProviderError(error, {
      provider: PROVIDER,
      signal: context.signal,
      secrets: context.secrets,
    });
  }
}

type OpenBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; text: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; json: string }
  | { type: "other" };

function started(block: Anthropic.Messages.RawContentBlockStartEvent["content_block"]): OpenBlock {
  if (block.type === "text") return { type: "text", text: block.text };
  if (block.type === "thinking") {
    return { type: "thinking", text: block.thinking, signature: block.signature };
  }
  if (block.type === "redacted_thinking") return { type: "redacted_thinking", data: block.data };
  if (block.type === "tool_use")
    return { type: "tool_use", id: block.id, name: block.name, json: "" };
  return { type: "other" };
}

function finished(blocks: ReadonlyMap<number, OpenBlock>, truncated: boolean): ContentBlock[] {
  const content: ContentBlock[] = [];
  for (const [, block] of [...blocks.entries()].sort(([a], [b]) => a - b)) {
    if (block.type === "text") content.push(block);
    else if (block.type === "thinking") {
      content.push(thinkingBlock(block.text, { signature: block.signature }));
    } else if (block.type === "redacted_thinking") {
      content.push(thinkingBlock("", { type: "redacted_thinking", data: block.data }));
    } else if (block.type === "tool_use") {
      content.push({
        type: "tool_use",
        id: block.id,
        name: block.name,
        input: parseToolInput(PROVIDER, block.name, block.json, truncated),
      });
    }
  }
  return content;
}

/**
 * Streams a message: text and thinking deltas as they come, tool inputs assembled from their
 * `input_json_delta` fragments, usage from `message_start` updated by `message_delta`; the last
 * event's response has the final tool's call of `output` turned into the answer. `prepare`
 * builds the request and its client when the stream is first read. One generator between the
 * SDK's stream and the engine: each layer more costs every delta a turn of the microtask queue.
 */
export async function* streamMessages(
  prepare: () => Promise<{ params: Params; context: CallContext }>,
  output: OutputFormat | undefined,
): AsyncGenerator<ProviderStreamEvent> {
  const { params, context } = await prepare();
  const blocks = new Map<number, OpenBlock>();
  let message: ApiMessage | undefined;
  let stopReason: string | null = null;
  let stopped = false;
  try {
    const stream = await context.client.messages.create(
      { ...params, stream: true },
      requestOptionsOf(context.signal),
    );
    for await (const event of stream) {
      switch (event.type) {
        case "message_start":
          message = event.message;
          break;
        case "content_block_start":
          blocks.set(event.index, started(event.content_block));
          break;
        case "content_block_delta": {
          const block = blocks.get(event.index);
          const delta = event.delta;
          if (delta.type === "text_delta" && block?.type === "text") {
            block.text += delta.text;
            yield { type: "text_delta", text: delta.text };
          } else if (delta.type === "thinking_delta" && block?.type === "thinking") {
            block.text += delta.thinking;
            yield { type: "thinking_delta", text: delta.thinking };
          } else if (delta.type === "signature_delta" && block?.type === "thinking") {
            block.signature += delta.signature;
          } else if (delta.type === "input_json_delta" && block?.type === "tool_use") {
            block.json += delta.partial_json;
          }
          break;
        }
        case "message_delta":
          stopReason = event.delta.stop_reason;
          if (message !== undefined) message.usage = mergeUsage(message.usage, event.usage);
          break;
        case "message_stop":
          stopped = true;
          break;
        default:
          break;
      }
    }
    context.signal?.throwIfAborted();
    if (message === undefined || !stopped) throw streamCutError(PROVIDER);
    const response = responseOf(
      finished(blocks, stopOf(stopReason) === "max_tokens"),
      stopOf(stopReason),
      usageFrom(message.usage),
      message.model,
      message.id,
    );
    yield { type: "response", response: answerFromFinalTool(response, output) };
  } catch (error) {
    throw toProviderError(error, {
      provider: PROVIDER,
      signal: context.signal,
      secrets: context.secrets,
    });
  }
}

// `message_delta` usage is cumulative; its input and cache counts may be null (not sent).
function mergeUsage(
  usage: ApiMessage["usage"],
  delta: Anthropic.Messages.MessageDeltaUsage,
): ApiMessage["usage"] {
  return {
    ...usage,
    output_tokens: delta.output_tokens,
    input_tokens: delta.input_tokens ?? usage.input_tokens,
    cache_read_input_tokens: delta.cache_read_input_tokens ?? usage.cache_read_input_tokens,
    cache_creation_input_tokens:
      delta.cache_creation_input_tokens ?? usage.cache_creation_input_tokens,
  };
}
