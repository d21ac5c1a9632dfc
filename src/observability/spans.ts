import type { Attributes, Span, Tracer } from "@opentelemetry/api";
import type { ProviderResponse, RunError, ToolCall, ToolResult, Usage } from "../core/values.js";
import { context, ProxyTracerProvider, SpanKind, SpanStatusCode, trace } from "./load-otel.js";
import { chatMetricsRecorded, recordChatMetrics } from "./metrics.js";

// Spans follow the OpenTelemetry GenAI semantic conventions. They carry names, ids, models and
// token counts only: never prompts, tool inputs, tool results or error messages (any of which
// may hold something secret); an error is named by its type.

/** The instrumentation scope of harnessx's spans. */
export const TRACER_NAME = "harnessx";

/**
 * The tracer of the provider registered now, or undefined while none is. Without one every span
 * would be a no-op carrying its parent's context, so a run skips them (and their attributes)
 * altogether: a direct run would otherwise build three per iteration for nothing. Looked up at
 * each span, so a provider registered (or removed) later is seen at once.
 */
export function activeTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider
    ? provider.getDelegateTracer(TRACER_NAME)
    : provider.getTracer(TRACER_NAME);
}

/** The agent config's model when it names none (the provider's own is used). */
const UNNAMED_MODEL = "default";

/**
 * The model a run requests: the agent config's, else the provider's own, else unknown (a
 * provider that does not say) — never the config's placeholder.
 */
export const requestedModel = (
  configured: string,
  provider: { readonly model?: string | undefined } | undefined,
): string | undefined =>
  configured !== UNNAMED_MODEL && configured !== "" ? configured : provider?.model;

/** What `invoke_agent` records about a run. */
export interface RunSpanInfo {
  agent: string;
  runId: string;
  sessionId: string;
  model: string | undefined;
  provider: string | undefined;
}

/** How a run (or a resumed segment of it) ended, read after its body settles. */
export interface RunSpanOutcome {
  status: string;
  error: RunError | null;
  /**
   * The run's usage totals, on the span that ends the run only: a durable run's earlier steps
   * leave it out, so that summing `invoke_agent` spans never counts a call twice.
   */
  usage: Usage | undefined;
  /** Provider calls started; unknown for a run span ended before its run (`RunSpans.abandon`). */
  iterations: number | undefined;
}

/** What `chat` records about a provider request. */
export interface ChatSpanInfo {
  provider: string | undefined;
  /** The host the request goes to, where the provider says. */
  serverAddress?: string | undefined;
  model: string | undefined;
  maxTokens: number;
  temperature: number;
}

/** Runs `body` in an `invoke_agent` span: the parent of the run's `chat` and `execute_tool` spans. */
export function traceRun<T>(
  info: RunSpanInfo,
  body: () => Promise<T>,
  outcome: () => RunSpanOutcome,
): Promise<T> {
  const tracer = activeTracer();
  if (tracer === undefined) return untraced(body);
  return tracedRun(tracer, info, body, outcome);
}

async function tracedRun<T>(
  tracer: Tracer,
  info: RunSpanInfo,
  body: () => Promise<T>,
  outcome: () => RunSpanOutcome,
): Promise<T> {
  const span = tracer.startSpan(`invoke_agent ${info.agent}`, {
    kind: SpanKind.INTERNAL,
    attributes: runAttributes(info),
  });
  try {
    return await context.with(trace.setSpan(context.active(), span), body);
  } catch (error) {
    failSpan(span, errorType(error));
    throw error;
  } finally {
    endRunSpan(span, outcome());
  }
}

/** Ends an `invoke_agent` span with how its run (or a step of it) ended, and any `more`. */
export function endRunSpan(span: Span, ended: RunSpanOutcome, more: Attributes = {}): void {
  span.setAttributes({
    ...more,
    ...(ended.usage === undefined ? {} : usageAttributes(ended.usage)),
    "harnessx.run.status": ended.status,
    ...(ended.iterations === undefined ? {} : { "harnessx.run.iterations": ended.iterations }),
  });
  if (ended.error !== null && ended.status !== "cancelled") failSpan(span, ended.error.name);
  span.end();
}

/** What an `invoke_agent` span says about its run when it starts. */
export const runAttributes = (info: RunSpanInfo): Attributes => ({
  "gen_ai.operation.name": "invoke_agent",
  "gen_ai.agent.name": info.agent,
  "gen_ai.conversation.id": info.sessionId,
  ...modelAttribute(info.model),
  ...providerAttribute(info.provider),
  "harnessx.run.id": info.runId,
});

/**
 * Runs one provider call in a `chat` span carrying that call's usage only; `responseOf` picks
 * the response and its id out of its value. Records the GenAI client metrics (duration, tokens) too.
 */
export function traceChat<T>(
  info: ChatSpanInfo,
  body: () => Promise<T>,
  responseOf: (value: T) => { response: ProviderResponse; id?: string | undefined } | undefined,
): Promise<T> {
  // Neither a tracer nor a meter provider registered: no span, no metric, nothing to build.
  if (!chatMetricsRecorded() && activeTracer() === undefined) return untraced(body);
  return tracedChat(info, body, responseOf);
}

async function tracedChat<T>(
  info: ChatSpanInfo,
  body: () => Promise<T>,
  responseOf: (value: T) => { response: ProviderResponse; id?: string | undefined } | undefined,
): Promise<T> {
  const metricAttributes: Attributes = {
    "gen_ai.operation.name": "chat",
    ...modelAttribute(info.model),
    ...providerAttribute(info.provider),
  };
  const started = performance.now();
  let response: ProviderResponse | undefined;
  try {
    const value = await inSpan(
      () => (info.model === undefined ? "chat" : `chat ${info.model}`),
      SpanKind.CLIENT,
      () => ({
        ...metricAttributes,
        "gen_ai.request.max_tokens": info.maxTokens,
        "gen_ai.request.temperature": info.temperature,
        ...(info.serverAddress === undefined ? {} : { "server.address": info.serverAddress }),
      }),
      body,
      (span, value) => {
        const answered = responseOf(value);
        response = answered?.response;
        if (answered === undefined || response === undefined) return;
        span.setAttributes({
          ...(answered.id === undefined ? {} : { "gen_ai.response.id": answered.id }),
          "gen_ai.response.model": response.model,
          "gen_ai.response.finish_reasons": [response.stopReason],
          ...usageAttributes(response.usage),
        });
      },
    );
    if (response === undefined) response = responseOf(value)?.response;
    const model = response === undefined ? {} : { "gen_ai.response.model": response.model };
    recordChatMetrics(
      { ...metricAttributes, ...model },
      performance.now() - started,
      response?.usage,
      undefined,
    );
    return value;
  } catch (error) {
    recordChatMetrics(metricAttributes, performance.now() - started, undefined, errorType(error));
    throw error;
  }
}

/** Runs one tool handler in an `execute_tool` span; an error result marks the span failed. */
export async function traceTool<T extends { result: ToolResult; thrown?: unknown }>(
  call: ToolCall,
  body: () => Promise<T>,
): Promise<T> {
  return inSpan(
    () => `execute_tool ${call.name}`,
    SpanKind.INTERNAL,
    () => toolAttributes(call),
    body,
    (span, { result, thrown }) => {
      if (result.isError) failSpan(span, thrown === undefined ? "tool_error" : errorType(thrown));
    },
  );
}

/**
 * Runs the start of a durable child run (a call of an agent tool) in the call's `execute_tool`
 * span: the child run's `invoke_agent` span is started inside it, so it is the span's child.
 * The call's result comes later, from the child; the span covers its start.
 */
export async function traceChildStart<T>(call: ToolCall, body: () => Promise<T>): Promise<T> {
  return inSpan(
    () => `execute_tool ${call.name}`,
    SpanKind.INTERNAL,
    () => toolAttributes(call),
    body,
    () => {},
  );
}

const toolAttributes = (call: ToolCall): Attributes => ({
  "gen_ai.operation.name": "execute_tool",
  "gen_ai.tool.name": call.name,
  "gen_ai.tool.call.id": call.id,
  "gen_ai.tool.type": "function",
});

async function inSpan<T>(
  name: () => string,
  kind: SpanKind,
  attributes: () => Attributes,
  body: () => Promise<T>,
  settle: (span: Span, value: T) => void,
): Promise<T> {
  const tracer = activeTracer();
  if (tracer === undefined) return body();
  const span = tracer.startSpan(name(), { kind, attributes: attributes() });
  try {
    const value = await context.with(trace.setSpan(context.active(), span), body);
    settle(span, value);
    return value;
  } catch (error) {
    failSpan(span, errorType(error));
    throw error;
  } finally {
    span.end();
  }
}

/**
 * `body()` as an async function would return it (a synchronous throw rejected), without a
 * promise of its own: a run held at its model call keeps every promise on its way alive.
 */
function untraced<T>(body: () => Promise<T>): Promise<T> {
  try {
    return body();
  } catch (error) {
    return Promise.reject(error);
  }
}

function failSpan(span: Span, type: string): void {
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

// The error's class name (as `RunResult.error.name` gives it), never its message.
const errorType = (error: unknown): string => (error instanceof Error ? error.name : "unknown");

const modelAttribute = (model: string | undefined): Attributes =>
  model === undefined ? {} : { "gen_ai.request.model": model };

const providerAttribute = (provider: string | undefined): Attributes =>
  provider === undefined ? {} : { "gen_ai.provider.name": provider };

// The conventions count cached tokens inside input_tokens; harnessx's `inputTokens` excludes them.
const usageAttributes = (usage: Usage): Attributes => ({
  "gen_ai.usage.input_tokens": usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
  "gen_ai.usage.output_tokens": usage.outputTokens,
  "gen_ai.usage.cache_read.input_tokens": usage.cacheReadTokens,
  "gen_ai.usage.cache_creation.input_tokens": usage.cacheWriteTokens,
});
