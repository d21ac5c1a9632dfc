import type { JSONSchema, Message, ProviderResponse, ToolResult, ToolSchema } from "./values.js";

/** One request to a model, as the engine sends it after `beforeLlmCall`. */
export interface ProviderRequest {
  system: string;
  messages: Message[];
  tools: ToolSchema[];
  model: string;
  maxTokens: number;
  temperature: number;
  stream: boolean;
  /** The prompt-cache key; `null` when caching is disabled. */
  prefixKey: string | null;
  /**
   * Set when the agent has `config.output`: the final answer must be JSON matching `schema`.
   * Providers that can ask for it natively do (OpenAI `json_schema`, Anthropic a final tool,
   * the AI SDK's `responseFormat`); the engine validates the answer either way.
   */
  output?: OutputFormat;
}

/** The structured answer a request asks for: a name and its JSON schema. */
export interface OutputFormat {
  /** A name for the schema (letters, digits, `_` and `-`): what providers label it with. */
  name: string;
  schema: JSONSchema;
}

export type ProviderStreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; text: string }
  /** Always the last event: the complete response. */
  | { type: "response"; response: ProviderResponse };

export interface ProviderCallOptions {
  signal?: AbortSignal;
}

/** What every model adapter implements. */
export interface Provider {
  readonly name: string;
  /**
   * The model the provider calls when the agent config names none: what traces report as the
   * requested model. Optional (a fake or custom provider may not say).
   */
  readonly model?: string;
  /** The host the provider's requests go to, where known: traces report it as `server.address`. */
  readonly serverAddress?: string;
  complete(request: ProviderRequest, options?: ProviderCallOptions): Promise<ProviderResponse>;
  stream?(
    request: ProviderRequest,
    options?: ProviderCallOptions,
  ): AsyncIterable<ProviderStreamEvent>;
  /**
   * A provider that replays a recording (`ReplayProvider`): the recorded raw result of call
   * `toolCallId` of the last response it gave, if the recording holds one. A call of an agent
   * tool (`agent.asTool`) takes it instead of running a child run, so that a replay of a parent
   * needs no children (SPEC §14). Other providers leave it out.
   */
  recordedToolResult?(toolCallId: string): ToolResult | undefined;
}
