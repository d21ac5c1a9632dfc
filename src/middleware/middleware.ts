import type {
  Message,
  ProviderResponse,
  ToolCall,
  ToolResult,
  ToolSchema,
} from "../core/values.js";

/** The four transformation stages. Each is async and returns the (possibly new) value. */
export interface MiddlewareStages {
  beforeLlmCall(messages: Message[], tools: ToolSchema[]): Promise<[Message[], ToolSchema[]]>;
  afterLlmCall(response: ProviderResponse): Promise<ProviderResponse>;
  /** Must return a call with the same `id`. */
  beforeToolExecution(call: ToolCall): Promise<ToolCall>;
  /** Must return a result with the same `toolCallId`. */
  afterToolExecution(result: ToolResult): Promise<ToolResult>;
}

/** A plain object with any of the four stages is middleware too. */
export type MiddlewareLike = Partial<MiddlewareStages>;

export type MiddlewareStage = keyof MiddlewareStages;

/**
 * Transforms data at the stages of a run. Override only the stages you need; the base
 * methods return their input unchanged.
 * @example
 * class NormalizeSearch extends Middleware {
 *   override async beforeToolExecution(call: ToolCall) {
 *     const query = call.input.query;
 *     return call.name === "search" && typeof query === "string"
 *       ? { ...call, input: { ...call.input, query: query.trim() } }
 *       : call;
 *   }
 * }
 */
export class Middleware implements MiddlewareStages {
  async beforeLlmCall(
    messages: Message[],
    tools: ToolSchema[],
  ): Promise<[Message[], ToolSchema[]]> {
    return [messages, tools];
  }

  async afterLlmCall(response: ProviderResponse): Promise<ProviderResponse> {
    return response;
  }

  async beforeToolExecution(call: ToolCall): Promise<ToolCall> {
    return call;
  }

  async afterToolExecution(result: ToolResult): Promise<ToolResult> {
    return result;
  }
}

const BASE = Middleware.prototype;

/** True when `middleware` does its own work at `stage` (not the identity of the base class). */
export function overrides(middleware: MiddlewareLike, stage: MiddlewareStage): boolean {
  const method = middleware[stage];
  return typeof method === "function" && method !== BASE[stage];
}
