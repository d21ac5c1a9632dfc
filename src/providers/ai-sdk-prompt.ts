import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type { ProviderRequest } from "../core/provider.js";
import type { ContentBlock } from "../core/values.js";
import { temperatureOf } from "./response-parts.js";

type AssistantPart = Extract<LanguageModelV3Message, { role: "assistant" }>["content"][number];
type ToolPart = Extract<LanguageModelV3Message, { role: "tool" }>["content"][number];

const isObject = (value: unknown): value is SharedV3ProviderOptions =>
  typeof value === "object" && value !== null && !Array.isArray(value);

// A tool result names its tool (the AI SDK needs it): the name of the call it answers.
function toolNames(messages: ProviderRequest["messages"]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "tool_use") names.set(block.id, block.name);
    }
  }
  return names;
}

function assistantPart(block: ContentBlock): AssistantPart | undefined {
  switch (block.type) {
    case "text":
      return block.text === "" ? undefined : { type: "text", text: block.text };
    // The provider metadata a reasoning part came with goes back as its provider options
    // (Anthropic's signature, OpenAI's item id and encrypted content…).
    case "thinking":
      return {
        type: "reasoning",
        text: block.text,
        ...(isObject(block.providerData) ? { providerOptions: block.providerData } : {}),
      };
    case "tool_use":
      return { type: "tool-call", toolCallId: block.id, toolName: block.name, input: block.input };
    case "tool_result":
      return undefined;
  }
}

/**
 * The AI SDK prompt of a canonical conversation: the system prompt, user text, assistant text,
 * reasoning and tool calls, and tool results (each with its tool's name) in tool messages.
 * The shape is the same in specifications v2 and v3.
 */
export function promptOf(request: ProviderRequest): LanguageModelV3Message[] {
  const names = toolNames(request.messages);
  const prompt: LanguageModelV3Message[] =
    request.system === "" ? [] : [{ role: "system", content: request.system }];
  for (const message of request.messages) {
    const results: ToolPart[] = [];
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      results.push({
        type: "tool-result",
        toolCallId: block.toolCallId,
        toolName: names.get(block.toolCallId) ?? "unknown",
        output: { type: block.isError ? "error-text" : "text", value: block.content },
      });
    }
    if (results.length > 0) prompt.push({ role: "tool", content: results });
    if (message.role === "assistant") {
      const content = message.content.map(assistantPart).filter((part) => part !== undefined);
      if (content.length > 0) prompt.push({ role: "assistant", content });
    } else {
      const text = message.content.flatMap((block) =>
        block.type === "text" && block.text !== ""
          ? [{ type: "text" as const, text: block.text }]
          : [],
      );
      if (text.length > 0) prompt.push({ role: "user", content: text });
    }
  }
  return prompt;
}

/** The call options of a canonical request (the same in v2 and v3). */
export function callOptionsOf(
  request: ProviderRequest,
  providerOptions: SharedV3ProviderOptions | undefined,
  signal: AbortSignal | undefined,
): LanguageModelV3CallOptions {
  return {
    prompt: promptOf(request),
    maxOutputTokens: request.maxTokens,
    ...temperatureOf(request.temperature),
    ...(request.tools.length === 0
      ? {}
      : {
          tools: request.tools.map((tool) => ({
            type: "function" as const,
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema,
          })),
        }),
    ...(request.output === undefined
      ? {}
      : {
          responseFormat: {
            type: "json" as const,
            schema: request.output.schema,
            name: request.output.name,
          },
        }),
    ...(providerOptions === undefined ? {} : { providerOptions }),
    ...(signal === undefined ? {} : { abortSignal: signal }),
  };
}
