import type OpenAI from "openai";
import type { ProviderRequest, ProviderStreamEvent } from "../core/provider.js";
import type { ContentBlock, ProviderResponse, StopReason, Usage } from "../core/values.js";
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

/** The Chat Completions request for a canonical request. */
export function chatParams(request: ProviderRequest, model: string): Params {
  return {
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
    max_completion_tokens: request.maxTokens,
    ...temperatureOf(request.temperature),
    ...(request.prefixKey === null ? {} : { prompt_cache_key: request.prefixKey }),
  };
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

interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
}

function finish(
  text: string,
  refusal: string,
  calls: readonly AssembledCall[],
  finishReason: string | null,
  usage: Usage,
  model: string,
): ProviderResponse {
  const content: ContentBlock[] = [];
  if (text !== "") content.push({ type: "text", text });
  if (refusal !== "") content.push({ type: "text", text: refusal });
  for (const call of calls) {
    content.push({
      type: "tool_use",
      id: call.id,
      name: call.name,
      input: parseToolInput(PROVIDER, call.name, call.arguments),
    });
  }
  const stop = refusal !== "" ? "refusal" : (STOP_REASONS[finishReason ?? "stop"] ?? "end_turn");
  return responseOf(content, stop, usage, model);
}

/** The canonical response of a chat completion (its first choice). */
export function fromChatCompletion(completion: OpenAI.Chat.ChatCompletion): ProviderResponse {
  const choice = completion.choices[0];
  const message = choice?.message;
  const calls: AssembledCall[] = [];
  for (const call of message?.tool_calls ?? []) {
    if (call.type === "function") {
      calls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
    }
  }
  return finish(
    message?.content ?? "",
    message?.refusal ?? "",
    calls,
    choice?.finish_reason ?? null,
    usageFrom(completion.usage),
    completion.model,
  );
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
 * Streams a chat completion: text deltas as they come, tool calls assembled by their `index`
 * from the id, name and argument fragments the chunks carry; usage from the final chunk.
 */
export async function* streamChat(
  params: Params,
  context: CallContext<OpenAI>,
): AsyncGenerator<ProviderStreamEvent> {
  let text = "";
  let refusal = "";
  const calls: AssembledCall[] = [];
  let finishReason: string | null = null;
  let usage: ApiUsage | null | undefined;
  let model = params.model;
  try {
    const stream = await context.client.chat.completions.create(
      { ...params, stream: true, stream_options: { include_usage: true } },
      requestOptionsOf(context.signal),
    );
    for await (const chunk of stream) {
      model = chunk.model;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      const delta = choice.delta;
      if (delta.content) {
        text += delta.content;
        yield { type: "text_delta", text: delta.content };
      }
      if (delta.refusal) {
        refusal += delta.refusal;
        yield { type: "text_delta", text: delta.refusal };
      }
      for (const part of delta.tool_calls ?? []) {
        const call = calls[part.index] ?? { id: "", name: "", arguments: "" };
        calls[part.index] = call;
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    context.signal?.throwIfAborted();
    // Every choice ends with a finish reason: without one the stream was cut.
    if (finishReason === null) throw streamCutError(PROVIDER);
    yield {
      type: "response",
      response: finish(text, refusal, calls.filter(Boolean), finishReason, usageFrom(usage), model),
    };
  } catch (error) {
    throw toProviderError(error, {
      provider: PROVIDER,
      signal: context.signal,
      secrets: context.secrets,
    });
  }
}
