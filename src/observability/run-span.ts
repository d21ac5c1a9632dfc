import type { Span } from "@opentelemetry/api";
import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from "./load-otel.js";
import {
  activeTracer,
  endRunSpan,
  type RunSpanInfo,
  type RunSpanOutcome,
  runAttributes,
} from "./spans.js";

// A durable run is one trace with one `invoke_agent` span, whichever processes advance it. With
// @opentelemetry/api alone a span can be ended only by the process that started it, and its id
// is chosen by the SDK when it starts: so the run's span starts at submit and its context is
// stored with the run (`RunRecord.trace`); every step's `chat` and `execute_tool` spans start in
// that context. Where the run cannot leave the submitting process (the memory backend), the
// span stays open and the step that finishes the run ends it with the run's totals; elsewhere
// it ends at submit (see `openRunSpan`).

/**
 * The carrier key that marks a stored trace context as the run's own `invoke_agent` span (a
 * run stored without it — submitted where no tracer was registered — gets one per step).
 */
const RUN_SPAN_KEY = "harnessx-run-span";

/**
 * Run spans still open in this process, by span id, with the runtime that opened them: ended by
 * the step that finishes the run, or by that runtime's `close`.
 */
const openSpans = new Map<string, { span: Span; owner: object }>();

/**
 * Starts a durable run's `invoke_agent` span, as a child of `parent` (a carrier as
 * `injectTraceContext` wrote it, e.g. a parent run's `execute_tool` span for a child run) or
 * else of the active context, and returns the carrier to store as the run's `trace`. `keepOpen`:
 * the run is finished in this process (memory backend), so the span is ended by
 * `finishRunSpan` with the run's totals (or by `abandonRunSpans(owner)`); otherwise it ends now. Without a registered tracer,
 * the context active now (or `parent`) is carried as it is, or nothing.
 */
export function openRunSpan(
  info: RunSpanInfo,
  options: {
    /** Set when the run is finished in this process: who ends the span if the run is not. */
    keepOpenFor?: object | undefined;
    parent?: Readonly<Record<string, string>> | undefined;
  },
): Record<string, string> {
  const parentContext =
    options.parent === undefined
      ? context.active()
      : propagation.extract(ROOT_CONTEXT, { ...options.parent });
  const tracer = activeTracer();
  if (tracer === undefined) return carrierOf(parentContext);
  const span = tracer.startSpan(
    `invoke_agent ${info.agent}`,
    { kind: SpanKind.INTERNAL, attributes: runAttributes(info) },
    parentContext,
  );
  const carrier = carrierOf(trace.setSpan(parentContext, span));
  // No propagator: the steps could not find the span, so it is the run's submit only.
  if (Object.keys(carrier).length === 0 || options.keepOpenFor === undefined) {
    span.end();
    return Object.keys(carrier).length === 0 ? {} : { ...carrier, [RUN_SPAN_KEY]: "ended" };
  }
  openSpans.set(span.spanContext().spanId, { span, owner: options.keepOpenFor });
  return { ...carrier, [RUN_SPAN_KEY]: "open" };
}

/** Whether a stored trace context is a run's own `invoke_agent` span (`openRunSpan`). */
export const isRunSpan = (carrier: Readonly<Record<string, string>> | undefined): boolean =>
  carrier?.[RUN_SPAN_KEY] !== undefined;

/**
 * Ends the run's `invoke_agent` span with its outcome, when it is open in this process (see
 * `openRunSpan`); a no-op otherwise.
 */
export function finishRunSpan(
  carrier: Readonly<Record<string, string>> | undefined,
  outcome: RunSpanOutcome,
): void {
  const spanId = spanIdOf(carrier);
  const open = spanId === undefined ? undefined : openSpans.get(spanId);
  if (open === undefined || spanId === undefined) return;
  openSpans.delete(spanId);
  endRunSpan(open.span, outcome);
}

/**
 * Ends the run spans `owner` opened whose runs have not finished (a closing runtime's): their
 * runs can no longer finish in this process. Their status is `status`, their totals unknown.
 */
export function abandonRunSpans(owner: object, status: string): void {
  for (const [spanId, open] of openSpans) {
    if (open.owner !== owner) continue;
    openSpans.delete(spanId);
    endRunSpan(open.span, { status, error: null, usage: undefined, iterations: undefined });
  }
}

function carrierOf(active: ReturnType<typeof context.active>): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (trace.getSpanContext(active) !== undefined) propagation.inject(active, carrier);
  return carrier;
}

function spanIdOf(carrier: Readonly<Record<string, string>> | undefined): string | undefined {
  if (carrier?.[RUN_SPAN_KEY] !== "open") return undefined;
  return trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { ...carrier }))?.spanId;
}
