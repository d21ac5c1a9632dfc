import { context, propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { describe, expect, it } from "vitest";
import { injectTraceContext, withExtractedContext } from "../../../src/index.js";
import { only, useTracing } from "../../support/tracing.js";

const tracing = useTracing();

const tracer = () => trace.getTracer("test");

describe("injectTraceContext", () => {
  it("gives the active span's W3C traceparent as plain strings", () => {
    const carrier = tracer().startActiveSpan("submit", (span) => {
      span.end();
      return injectTraceContext();
    });
    const { traceId, spanId } = only(tracing.spans(), "submit").spanContext();
    expect(carrier).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
    expect(JSON.parse(JSON.stringify(carrier))).toEqual(carrier);
  });

  it("gives {} when no span is active", () => {
    expect(injectTraceContext()).toEqual({});
  });
});

describe("withExtractedContext", () => {
  it("runs fn in the carried trace: its spans are children of the injecting span", async () => {
    const carrier = tracer().startActiveSpan("submit", (span) => {
      span.end();
      return injectTraceContext();
    });
    // As a worker would: job data read back from Redis, outside any span.
    const fromJob = JSON.parse(JSON.stringify({ trace: carrier })) as { trace: unknown };
    const value = await withExtractedContext(fromJob.trace as Record<string, unknown>, async () => {
      await Promise.resolve();
      tracer().startSpan("step").end();
      return 42;
    });
    expect(value).toBe(42);
    const submit = only(tracing.spans(), "submit").spanContext();
    const step = only(tracing.spans(), "step");
    expect(step.spanContext().traceId).toBe(submit.traceId);
    expect(step.parentSpanContext?.spanId).toBe(submit.spanId);
    expect(step.parentSpanContext?.isRemote).toBe(true);
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["an empty carrier", {}],
    ["a malformed traceparent", { traceparent: "00-not-a-trace-01" }],
    ["a traceparent that is not a string", { traceparent: 7 }],
  ])("runs fn in the current context for %s", (_label, carrier) => {
    const outer = tracer().startSpan("outer");
    const active = trace.setSpan(context.active(), outer);
    const seen = context.with(active, () =>
      withExtractedContext(carrier as Record<string, unknown> | null | undefined, () =>
        trace.getActiveSpan(),
      ),
    );
    outer.end();
    expect(seen).toBe(outer);
  });

  it("carries nothing when the application registered no propagator", () => {
    propagation.disable();
    try {
      const carrier = tracer().startActiveSpan("submit", (span) => {
        span.end();
        return injectTraceContext();
      });
      expect(carrier).toEqual({});
    } finally {
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    }
  });
});
