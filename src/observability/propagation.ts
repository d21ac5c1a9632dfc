import { context, propagation, ROOT_CONTEXT, trace } from "./load-otel.js";

// Both go through the application's registered propagator (the SDK's default is W3C trace
// context and baggage); without one they carry nothing and spans start their own traces.

/**
 * The active trace context as plain strings (W3C `traceparent`, `tracestate` when set), to
 * carry in a job's data; `{}` when no span is active or no propagator is registered.
 */
export function injectTraceContext(): Record<string, string> {
  const carrier: Record<string, string> = {};
  const active = context.active();
  if (trace.getSpanContext(active) !== undefined) propagation.inject(active, carrier);
  return carrier;
}

/**
 * Runs `fn` with the trace context read from `carrier` (as `injectTraceContext` wrote it) as
 * the active context, so the spans it starts join that trace. A missing or malformed carrier
 * runs `fn` in the context active now.
 */
export function withExtractedContext<T>(
  carrier: Readonly<Record<string, unknown>> | null | undefined,
  fn: () => T,
): T {
  const extracted = propagation.extract(ROOT_CONTEXT, stringFields(carrier));
  if (trace.getSpanContext(extracted) === undefined) return fn();
  return context.with(extracted, fn);
}

// Job data comes back from Redis: only its string fields are read.
function stringFields(carrier: Readonly<Record<string, unknown>> | null | undefined) {
  const fields: Record<string, string> = {};
  if (typeof carrier !== "object" || carrier === null) return fields;
  for (const [key, value] of Object.entries(carrier)) {
    if (typeof value === "string") fields[key] = value;
  }
  return fields;
}
