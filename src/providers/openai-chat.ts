import type OpenAI from "openai";
import type { ProviderRequest, ProviderStreamEvent } from "../core/provider.js";
import type { ContentBlock, ProviderResponse, StopReason, Usage } from "../core/values.js";
import { type AssembledCall, completeCall, ToolCallAssembler } from "./openai-chat-calls.js";
import type { OpenAIWire } from "./openai-wire.js";
import { parseToolInput, responseOf, temperatureOf, usageOf } from "./response-parts.js";
import { type CallContext, requestOptionsOf } from "./sdk-client.js";
import { streamCutError, toProviderError } from "./sdk-errors.js";

type Params = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
type ApiUsage = OpenAI.Completions.CompletionUsage;

const PROVIDER = "OpenAI";

// One chat message per canonical message, tool results as `tool` messages before any text.
// Thinking blocks are not sent back: Chat Completions has no place for them.
function messagesOf(system: string, messages: ProviderRequest["messages"]): ChatMessage[] {
  const chat: ChatMessage[] = system === "" ? [] : [{ role: "system", content: system }];
  for (const message of messages) {
    let text = "";
    const toolCalls: OpenAI.Chat.ChatCompletionMessageFunctionToolCall[] = [];
    for (const block of message.content) {
      if (block.type === "text") text += block.text;
      else if (block.type === "tool_use") {
        toolCalls.push({
          id: block.id,
          type: "function",
          function: { name: block.name, arguments: JSON.stringify(block.input) },
        });
      } else if (block.type === "tool_result") {
        chat.push({ role: "tool", tool_call_id: block.toolCallId, content: block.content });
      }
    }
    if (message.role === "assistant") {
      if (text === "" && toolCalls.length === 0) continue;
      chat.push({
        role: "assistant",
        content: text === "" ? null : text,
        ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
      });
    } else if (text !== "") chat.push({ role: "user", content: text });
  }
  return chat;
}

/**
 * The Chat Completions request for a canonical request: `maxTokens` under the field the server
 * reads, `prompt_cache_key` only where it is known, `extraBody` merged over the rest.
 */
export function chatParams(request: ProviderRequest, model: string, wire: OpenAIWire): Params {
  const params: Params = {
    model,
    messages: messagesOf(request.system, request.messages),
    ...(request.tools.length === 0
      ? {}
      : {
          tools: request.tools.map((tool) => ({
            type: "function" as const,
            function: {
              name: tool.name,
              description: tool.description,
              parameters: tool.inputSchema,
            },
          })),
        }),
    [wire.maxTokensField]: request.maxTokens,
    ...temperatureOf(request.temperature),
    ...(request.prefixKey === null || !wire.promptCacheKey
      ? {}
      : { prompt_cache_key: request.prefixKey }),
    ...(request.output === undefined
      ? {}
      : {
          response_format: {
            type: "json_schema" as const,
            // Not strict: strict mode needs every property required and no extra ones, which
            // a zod schema need not be; the engine validates the answer either way.
            json_schema: {
              name: request.output.name,
              schema: request.output.schema,
              strict: false,
            },
          },
        }),
  };
  return wire.extraBody === undefined ? params : ({ ...params, ...wire.extraBody } as Params);
}

const STOP_REASONS: Record<string, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  function_call: "tool_use",
  content_filter: "refusal",
};

function usageFrom(usage: ApiUsage | null | undefined): Usage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  return usageOf(
    (usage?.prompt_tokens ?? 0) - cached - written,
    usage?.completion_tokens,
    cached,
    written,
  );
}

// Compatible servers (vLLM, DeepSeek, Ollama, OpenRouter) put reasoning beside the content.
interface Reasoning {
  reasoning_content?: string | null;
  reasoning?: string | null;
}

const reasoningOf = (part: object): string => {
  const { reasoning_content: content, reasoning } = part as Reasoning;
  return (
    (typeof content === "string" ? content : "") || (typeof reasoning === "string" ? reasoning : "")
  );
};

interface Answer {
  thinking: string;
  text: string;
  refusal: string;
  calls: readonly AssembledCall[];
  finishReason: string | null;
  usage: Usage;
  model: string;
  /** The completion's id (every chunk of a stream repeats it), when the server sent one. */
  id: string | undefined;
}

function finish(answer: Answer): ProviderResponse {
  const { thinking, text, refusal, calls, finishReason, usage, model, id } = answer;
  const truncated = finishReason === "length";
  const content: ContentBlock[] = [];
  if (thinking !== "") content.push({ type: "thinking", text: thinking });
  if (text !== "") content.push({ type: "text", text });
  if (refusal !== "") content.push({ type: "text", text: refusal });
  for (const call of calls) {
    content.push({
      type: "tool_use",
      id: call.id,
      name: call.name,
      input: parseToolInput(PROVIDER, call.name, call.arguments, truncated),
    });
  }
  const stop = refusal !== "" ? "refusal" : (STOP_REASONS[finishReason ?? "stop"] ?? "end_turn");
  return responseOf(content, stop, usage, model, id);
}

/** The canonical response of a chat completion (its first choice). */
export function fromChatCompletion(completion: OpenAI.Chat.ChatCompletion): ProviderResponse {
  const choice = completion.choices[0];
  const message = choice?.message;
  const calls: AssembledCall[] = [];
  // Some compatible servers leave out `type` or `id`: every call with a function is kept.
  for (const call of message?.tool_calls ?? []) {
    if (call.type === "custom") continue;
    const fn = (call as Partial<OpenAI.Chat.ChatCompletionMessageFunctionToolCall>).function;
    const id = typeof call.id === "string" ? call.id : "";
    calls.push(
      completeCall({ id, name: fn?.name ?? "", arguments: fn?.arguments ?? "" }, PROVIDER),
    );
  }
  return finish({
    thinking: message === undefined ? "" : reasoningOf(message),
    text: message?.content ?? "",
    refusal: message?.refusal ?? "",
    calls,
    finishReason: choice?.finish_reason ?? null,
    usage: usageFrom(completion.usage),
    model: completion.model,
    id: typeof completion.id === "string" ? completion.id : undefined,
  });
}

export async function completeChat(
  params: Params,
  context: CallContext<OpenAI>,
): Promise<ProviderResponse> {
  try {
    const completion = await context.client.chat.completions.create(params, {
      signal: context.signal,
    });
    return fromChatCompletion(completion);
  } catch (error) {
    throw toProviderError(error, {
      provider: PROVIDER,
      signal: context.signal,
      secrets: context.secrets,
    });
  }
}

/**
 * Streams a chat completion: text and reasoning deltas as they come, tool calls assembled from the
 * id, name and argument fragments the chunks carry (`ToolCallAssembler`); usage from the final
 * chunk, or zero (logged once) from a server that sends none.
 */
export async function* streamChat(
  params: Params,
  context: CallContext<OpenAI>,
  wire: OpenAIWire,
): AsyncGenerator<ProviderStreamEvent> {
  let thinking = "";
  let text = "";
  let refusal = "";
  const calls = new ToolCallAssembler();
  let finishReason: string | null = null;
  let usage: ApiUsage | null | undefined;
  let model = params.model;
  let id: string | undefined;
  try {
    const stream = await context.client.chat.completions.create(
      { ...params, stream: true, stream_options: { include_usage: true } },
      requestOptionsOf(context.signal),
    );
    for await (const chunk of stream) {
      model = chunk.model;
      if (typeof chunk.id === "string" && chunk.id !== "") id = chunk.id;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      const delta = choice.delta;
      const reasoning = reasoningOf(delta);
      if (reasoning !== "") {
        thinking += reasoning;
        yield { type: "thinking_delta", text: reasoning };
      }
      if (delta.content) {
        text += delta.content;
        yield { type: "text_delta", text: delta.content };
      }
      if (delta.refusal) {
        refusal += delta.refusal;
        yield { type: "text_delta", text: delta.refusal };
      }
      for (const part of delta.tool_calls ?? []) calls.add(part);
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    context.signal?.throwIfAborted();
    // Every choice ends with a finish reason: without one the stream was cut.
    if (finishReason === null) throw streamCutError(PROVIDER);
    if (!usage) wire.usageMissing();
    yield {
      type: "response",
      response: finish({
        thinking,
        text,
        refusal,
        calls: calls.calls(PROVIDER),
        finishReason,
        usage: usageFrom(usage),
        model,
        id,
      }),
    };
  } catch (error) {
    throw toProviderError(error, {
      provider: PROVIDER,
      signal: context.signal,
      secrets: context.secrets,
    });
  }
}
