import type OpenAI from "openai";
import type { ProviderRequest, ProviderStreamEvent } from "../core/provider.js";
import type { ContentBlock, JsonValue, ProviderResponse, StopReason } from "../core/values.js";
import type { OpenAIWire } from "./openai-wire.js";
import { parseToolInput, responseOf, temperatureOf, usageOf } from "./response-parts.js";
import { requestOptionsOf, type CallContext as SdkCallContext } from "./sdk-client.js";
import { streamCutError, toProviderError } from "./sdk-errors.js";

type Params = OpenAI.Responses.ResponseCreateParamsNonStreaming;
type InputItem = OpenAI.Responses.ResponseInputItem;
type OutputItem = OpenAI.Responses.ResponseOutputItem;
type ApiResponse = OpenAI.Responses.Response;

const PROVIDER = "OpenAI";

/** A reasoning item the API gave, kept as a thinking block's `providerData`. */
const isReasoningItem = (data: unknown): data is OpenAI.Responses.ResponseReasoningItem =>
  typeof data === "object" &&
  data !== null &&
  (data as { type?: unknown }).type === "reasoning" &&
  typeof (data as { id?: unknown }).id === "string";

// A thinking block goes back as the reasoning item it came from (id, summary and, with
// `store: false`, its encrypted content), unchanged; one without that item is not sent.
function inputOf(messages: ProviderRequest["messages"]): InputItem[] {
  const input: InputItem[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    let text = "";
    const flush = () => {
      if (text !== "") input.push({ role, content: text });
      text = "";
    };
    for (const block of message.content) {
      if (block.type === "text") text += block.text;
      else if (block.type === "thinking") {
        if (role === "assistant" && isReasoningItem(block.providerData)) {
          flush();
          input.push(block.providerData);
        }
      } else if (block.type === "tool_use") {
        flush();
        input.push({
          type: "function_call",
          call_id: block.id,
          name: block.name,
          arguments: JSON.stringify(block.input),
        });
      } else if (block.type === "tool_result") {
        flush();
        input.push({
          type: "function_call_output",
          call_id: block.toolCallId,
          output: block.content,
        });
      }
    }
    flush();
  }
  return input;
}

/** The Responses API request for a canonical request, `extraBody` merged over it. */
export function responsesParams(request: ProviderRequest, model: string, wire: OpenAIWire): Params {
  const params: Params = {
    model,
    input: inputOf(request.messages),
    ...(request.system === "" ? {} : { instructions: request.system }),
    ...(request.tools.length === 0
      ? {}
      : {
          tools: request.tools.map((tool) => ({
            type: "function" as const,
            name: tool.name,
            description: tool.description,
            parameters: tool.inputSchema,
            // Strict mode needs every property required and no extra ones; tool schemas may not be.
            strict: false,
          })),
        }),
    max_output_tokens: request.maxTokens,
    ...temperatureOf(request.temperature),
    ...(request.prefixKey === null || !wire.promptCacheKey
      ? {}
      : { prompt_cache_key: request.prefixKey }),
    ...(request.output === undefined
      ? {}
      : {
          text: {
            format: {
              type: "json_schema" as const,
              name: request.output.name,
              schema: request.output.schema,
              // As the tools: strict mode needs a schema a zod one need not be.
              strict: false,
            },
          },
        }),
  };
  return wire.extraBody === undefined ? params : ({ ...params, ...wire.extraBody } as Params);
}

function contentOf(
  output: readonly OutputItem[],
  truncated: boolean,
): { content: ContentBlock[]; refused: boolean } {
  const content: ContentBlock[] = [];
  let refused = false;
  for (const item of output) {
    if (item.type === "message") {
      for (const part of item.content) {
        if (part.type === "output_text") content.push({ type: "text", text: part.text });
        else {
          refused = true;
          content.push({ type: "text", text: part.refusal });
        }
      }
    } else if (item.type === "function_call") {
      content.push({
        type: "tool_use",
        id: item.call_id,
        name: item.name,
        input: parseToolInput(PROVIDER, item.name, item.arguments, truncated),
      });
    } else if (item.type === "reasoning") {
      const parts = item.summary.length > 0 ? item.summary : (item.content ?? []);
      const text = parts.map((part) => part.text).join("\n\n");
      // Kept even without a summary: the item goes back on the next request as it came.
      content.push({ type: "thinking", text, providerData: item as unknown as JsonValue });
    }
  }
  return { content, refused };
}

function stopOf(response: ApiResponse, refused: boolean): StopReason {
  if (refused) return "refusal";
  if (response.status === "incomplete") {
    return response.incomplete_details?.reason === "content_filter" ? "refusal" : "max_tokens";
  }
  return "end_turn";
}

function failureOf(response: ApiResponse): Error {
  const error = response.error;
  const failure = new Error(
    error?.message ?? `The response ended with status "${response.status}".`,
  );
  // Classified like an error sent in a stream: by its code.
  return Object.assign(failure, { code: error?.code ?? "server_error", type: "response_failed" });
}

/** The canonical response of a finished Responses API response. */
export function fromResponse(
  response: ApiResponse,
  output: readonly OutputItem[] = response.output,
): ProviderResponse {
  if (response.status === "failed") throw failureOf(response);
  const truncated =
    response.status === "incomplete" && response.incomplete_details?.reason === "max_output_tokens";
  const { content, refused } = contentOf(output, truncated);
  const usage = response.usage;
  const cached = usage?.input_tokens_details?.cached_tokens ?? 0;
  const written = usage?.input_tokens_details?.cache_write_tokens ?? 0;
  return responseOf(
    content,
    stopOf(response, refused),
    usageOf((usage?.input_tokens ?? 0) - cached - written, usage?.output_tokens, cached, written),
    response.model,
    response.id,
  );
}

type CallContext = SdkCallContext<OpenAI>;

export async function completeResponses(
  params: Params,
  context: CallContext,
): Promise<ProviderResponse> {
  try {
    const response = await context.client.responses.create(
      params,
      requestOptionsOf(context.signal),
    );
    return fromResponse(response);
  } catch (error) {
    throw toProviderError(error, {
      provider: PROVIDER,
      signal: context.signal,
      secrets: context.secrets,
    });
  }
}

/**
 * Streams a Responses API call: text and reasoning deltas as they come; output items (tool-call
 * arguments included) assembled from their deltas, each replaced by the complete item the API
 * sends when it is done.
 */
export async function* streamResponses(
  params: Params,
  context: CallContext,
): AsyncGenerator<ProviderStreamEvent> {
  const items = new Map<number, OutputItem>();
  let final: ApiResponse | undefined;
  try {
    const stream = await context.client.responses.create(
      { ...params, stream: true },
      requestOptionsOf(context.signal),
    );
    for await (const event of stream) {
      switch (event.type) {
        case "response.output_text.delta":
        case "response.refusal.delta":
          yield { type: "text_delta", text: event.delta };
          break;
        case "response.reasoning_summary_text.delta":
        case "response.reasoning_text.delta":
          yield { type: "thinking_delta", text: event.delta };
          break;
        case "response.output_item.added":
        case "response.output_item.done":
          items.set(event.output_index, event.item);
          break;
        case "response.function_call_arguments.delta": {
          const item = items.get(event.output_index);
          if (item?.type === "function_call") item.arguments += event.delta;
          break;
        }
        case "response.completed":
        case "response.incomplete":
        case "response.failed":
          final = event.response;
          break;
        case "error":
          throw Object.assign(new Error(event.message), { code: event.code, type: "stream_error" });
        default:
          break;
      }
    }
    // The SDK ends the stream quietly when the signal aborts it.
    context.signal?.throwIfAborted();
    if (final === undefined) throw streamCutError(PROVIDER);
    const output = [...items.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
    yield {
      type: "response",
      response: fromResponse(final, output.length > 0 ? output : final.output),
    };
  } catch (error) {
    throw toProviderError(error, {
      provider: PROVIDER,
      signal: context.signal,
      secrets: context.secrets,
    });
  }
}
