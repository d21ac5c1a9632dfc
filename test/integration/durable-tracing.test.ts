// A durable run is one trace: the trace context the run was submitted in is stored with it, and
// every step and tool job starts its spans in it, whichever process runs them. Two runtimes on
// one Redis prefix stand in for a submitting process and a worker process.
import { context, trace } from "@opentelemetry/api";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunBackend } from "../../src/backend.js";
import { redisBackend } from "../../src/index.js";
import { useTracing } from "../support/tracing.js";
import { until } from "../support/until.js";
import { makeAgent, oneToolModel, Runtimes, searchTool } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

beforeAll(async () => {
  await requireRedis();
});

const tracing = useTracing();
const runtimes = new Runtimes();
const prefixes: string[] = [];

afterEach(async () => {
  await runtimes.closeAll();
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
});

function backendOn(prefix: string): RunBackend {
  return redisBackend({ url: redisUrl(), prefix, lockDurationMs: 2000, stalledIntervalMs: 1000 });
}

describe("tracing durable runs on redisBackend()", () => {
  it("puts every step and tool job of a run in the trace it was submitted in", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const search = searchTool();
    const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });
    await runtimes.start([agent], backendOn(prefix));
    const submitter = await runtimes.start([agent], backendOn(prefix), { workers: false });

    const request = trace.getTracer("test").startSpan("handle request");
    const handle = await context.with(trace.setSpan(context.active(), request), () =>
      submitter.submit("support", "cats"),
    );
    request.end();
    expect((await handle.result()).status).toBe("completed");
    // The result is published by the last step's save; that step's span ends just after it.
    await until(
      "the last step's span to end",
      async () =>
        tracing.spans().filter((span) => span.name === "invoke_agent support").length >= 2,
    );

    const spans = tracing.spans();
    const { traceId, spanId } = request.spanContext();
    const names = spans.map((span) => span.name);
    expect(names).toEqual(
      expect.arrayContaining(["invoke_agent support", "execute_tool search", "handle request"]),
    );
    expect(names.filter((name) => name.startsWith("chat"))).toHaveLength(2);
    for (const span of spans)
      expect({ name: span.name, traceId: span.spanContext().traceId }).toEqual({
        name: span.name,
        traceId,
      });
    const steps = spans.filter((span) => span.name === "invoke_agent support");
    expect(steps.length).toBeGreaterThanOrEqual(2);
    for (const step of steps) expect(step.parentSpanContext?.spanId).toBe(spanId);
    // The run's totals once (on the step that ended it): summing the spans counts each call once.
    const result = await handle.result();
    const counted = steps.map((step) => step.attributes["gen_ai.usage.output_tokens"]);
    expect(counted.filter((value) => value !== undefined)).toEqual([result.usage.outputTokens]);
    const chats = spans.filter((span) => span.name.startsWith("chat"));
    const perCall = chats.map((span) => Number(span.attributes["gen_ai.usage.output_tokens"]));
    expect(perCall.reduce((sum, value) => sum + value, 0)).toBe(result.usage.outputTokens);
  });

  it("starts a trace of the run's own when nothing was traced at submit", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const search = searchTool();
    const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });
    const runtime = await runtimes.start([agent], backendOn(prefix));

    const handle = await runtime.submit("support", "dogs");
    expect((await handle.result()).status).toBe("completed");
    expect((await handle.record()).trace).toBeUndefined();
    expect(tracing.spans().some((span) => span.name === "execute_tool search")).toBe(true);
  });
});
