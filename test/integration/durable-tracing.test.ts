// A durable run is one trace with one `invoke_agent` span: started at submit in the submitter's
// context, stored with the run, and the parent of every step's and tool job's spans, whichever
// process runs them, and ended once with the run's totals by the process that submitted it. On
// Redis (and a Cluster) two runtimes on one prefix stand in for a submitting process and a
// worker process; the run there is split over several steps by an approval.
import { context, type Span, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunBackend } from "../../src/backend.js";
import {
  type AgentRuntime,
  memoryBackend,
  type Provider,
  ProviderError,
  type RunHandle,
  redisBackend,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { only, useTracing } from "../support/tracing.js";
import { until } from "../support/until.js";
import { approvalAgent, makeAgent, oneToolModel, Runtimes, searchTool } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";
import { clusterNodes, deleteClusterPrefix, uniqueClusterPrefix } from "./redis-cluster.js";

const tracing = useTracing();
const runtimes = new Runtimes();
const prefixes: string[] = [];

afterEach(async () => {
  await runtimes.closeAll();
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
});

/** Submits inside a "handle request" span, as an application serving a request would. */
async function submitTraced(submitter: AgentRuntime, agent: string, input: string) {
  const request = trace.getTracer("test").startSpan("handle request");
  const handle = await context.with(trace.setSpan(context.active(), request), () =>
    submitter.submit(agent, input),
  );
  request.end();
  return { request, handle };
}

/** A model whose every call fails for good (not retryable). */
const failingModel = (): Provider => ({
  name: "failing",
  complete: async () => {
    throw new ProviderError("bad request", { code: "bad_request", retryable: false });
  },
});

const runSpansOf = (agent: string) =>
  tracing.spans().filter((span) => span.name === `invoke_agent ${agent}`);

/** Asserts the run's spans form one tree: request → invoke_agent → every chat and execute_tool. */
function expectOneTree(request: Span, agent: string, runId: string): ReadableSpan {
  const spans = tracing.spans();
  const { traceId, spanId } = request.spanContext();
  const runs = runSpansOf(agent);
  expect(runs).toHaveLength(1);
  const run = runs[0] as ReadableSpan;
  expect(run.attributes["harnessx.run.id"]).toBe(runId);
  expect(run.spanContext().traceId).toBe(traceId);
  expect(run.parentSpanContext?.spanId).toBe(spanId);
  const work = spans.filter(
    (span) => span.name.startsWith("chat") || span.name.startsWith("execute_tool"),
  );
  expect(work.length).toBeGreaterThanOrEqual(3);
  for (const span of work) {
    expect({ name: span.name, traceId: span.spanContext().traceId }).toEqual({
      name: span.name,
      traceId,
    });
    expect({ name: span.name, parent: span.parentSpanContext?.spanId }).toEqual({
      name: span.name,
      parent: run.spanContext().spanId,
    });
  }
  return run;
}

async function approveWhenAsked(runtime: AgentRuntime, handle: RunHandle) {
  const parked = await handle.result();
  expect(parked.status).toBe("awaiting_approval");
  const pending = parked.pending[0];
  if (pending === undefined) throw new Error("no pending call");
  await runtime.approve(handle.runId, pending.toolCallId, { by: "ops-lead" });
  await until("the run to finish", async () => (await handle.result()).status === "completed");
  return handle.result();
}

/**
 * A run submitted by a runtime without workers and advanced by another (two span registries:
 * the worker cannot end the submitter's span; the run's final summary, heard by the
 * submitter, does): one tree, the run's totals on its span, ended after every step's spans.
 */
async function expectSubmitterEndsRunSpan(backend: () => RunBackend): Promise<void> {
  const { agent } = approvalAgent();
  await runtimes.start([agent], backend());
  const submitter = await runtimes.start([agent], backend(), { workers: false });

  const { request, handle } = await submitTraced(submitter, "ops", "/tmp/old.log");
  const result = await approveWhenAsked(submitter, handle);
  await until("the run's span to end", async () => runSpansOf("ops").length === 1);
  const run = expectOneTree(request, "ops", handle.runId);
  expect(tracing.spans().map((span) => span.name)).toContain("execute_tool delete_file");
  // The run's totals once, on its one span, as on memory; the chat spans carry each call's own.
  expect(run.attributes["harnessx.run.status"]).toBe("completed");
  expect(run.attributes["harnessx.run.iterations"]).toBe(result.iterations);
  expect(run.attributes["gen_ai.usage.output_tokens"]).toBe(result.usage.outputTokens);
  expect(run.attributes["harnessx.run.observed"]).toBeUndefined();
  const chats = tracing.spans().filter((span) => span.name.startsWith("chat"));
  expect(chats).toHaveLength(2);
  const perCall = chats.map((span) => Number(span.attributes["gen_ai.usage.output_tokens"]));
  expect(perCall.reduce((sum, value) => sum + value, 0)).toBe(result.usage.outputTokens);
  expect(result.usage.outputTokens).toBeGreaterThan(0);
  const endOf = (span: ReadableSpan) => span.endTime[0] * 1e9 + span.endTime[1];
  const work = tracing.spans().filter((span) => span !== run && span.name !== "handle request");
  expect(endOf(run)).toBeGreaterThanOrEqual(Math.max(...work.map(endOf)));
}

describe("tracing durable runs on memoryBackend()", () => {
  it("gives a run split by an approval one invoke_agent span, ended with the run's totals", async () => {
    const { agent } = approvalAgent();
    const runtime = await runtimes.start([agent], memoryBackend());
    const { request, handle } = await submitTraced(runtime, "ops", "/tmp/old.log");
    const result = await approveWhenAsked(runtime, handle);
    await until("the run's span to end", async () => runSpansOf("ops").length === 1);

    const run = expectOneTree(request, "ops", handle.runId);
    const names = tracing.spans().map((span) => span.name);
    expect(names.filter((name) => name.startsWith("chat"))).toHaveLength(2);
    expect(names).toContain("execute_tool delete_file");
    // The run's totals once, on its one span; the chat spans carry each call's own.
    expect(run.attributes["harnessx.run.status"]).toBe("completed");
    expect(run.attributes["harnessx.run.iterations"]).toBe(result.iterations);
    expect(run.attributes["gen_ai.usage.output_tokens"]).toBe(result.usage.outputTokens);
    const chats = tracing.spans().filter((span) => span.name.startsWith("chat"));
    const perCall = chats.map((span) => Number(span.attributes["gen_ai.usage.output_tokens"]));
    expect(perCall.reduce((sum, value) => sum + value, 0)).toBe(result.usage.outputTokens);
    // It spans the whole run, from submit to the step that finished it.
    const last = Math.max(...chats.map((span) => span.endTime[0] * 1e9 + span.endTime[1]));
    expect(run.endTime[0] * 1e9 + run.endTime[1]).toBeGreaterThanOrEqual(last);
  });

  it("parents a run submitted from a tool handler (a child run) to that call's execute_tool span", async () => {
    let runtime: AgentRuntime | undefined;
    const delegate = tool({
      name: "delegate",
      description: "Hands the question to the researcher.",
      input: z.object({ query: z.string() }),
      handler: async ({ query }) => {
        if (runtime === undefined) throw new Error("no runtime");
        const child = await runtime.submit("researcher", query);
        return (await child.result()).output ?? "";
      },
    });
    const search = searchTool();
    const lead = makeAgent("lead", { provider: oneToolModel("delegate"), tools: [delegate] });
    const researcher = makeAgent("researcher", {
      provider: oneToolModel("search"),
      tools: [search.tool],
    });
    runtime = await runtimes.start([lead, researcher], memoryBackend());
    const { request, handle } = await submitTraced(runtime, "lead", "cats");
    expect((await handle.result()).status).toBe("completed");
    await until("both run spans", async () => tracing.spans().length >= 2 + 6);

    const [parent] = runSpansOf("lead");
    expect(parent?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    const call = tracing.spans().find((span) => span.name === "execute_tool delegate");
    expect(call?.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
    const [child] = runSpansOf("researcher");
    expect(child?.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(child?.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
    const childSearch = tracing.spans().find((span) => span.name === "execute_tool search");
    expect(childSearch?.parentSpanContext?.spanId).toBe(child?.spanContext().spanId);
  });

  it("ends a parked run's span when its runtime closes, as closed", async () => {
    const { agent } = approvalAgent();
    const runtime = await runtimes.start([agent], memoryBackend());
    const { handle } = await submitTraced(runtime, "ops", "/tmp/kept.log");
    expect((await handle.result()).status).toBe("awaiting_approval");
    expect(runSpansOf("ops")).toHaveLength(0);
    await runtime.close();
    const [run] = runSpansOf("ops");
    expect(run?.attributes["harnessx.run.status"]).toBe("closed");
  });
});

describe("tracing durable runs on redisBackend()", () => {
  beforeAll(async () => {
    await requireRedis();
  });

  function backendOn(prefix: string): RunBackend {
    return redisBackend({ url: redisUrl(), prefix, lockDurationMs: 2000, stalledIntervalMs: 1000 });
  }

  it("puts every step and tool job of a run split by an approval under its one invoke_agent span, ended by the submitter with the run's totals", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    await expectSubmitterEndsRunSpan(() => backendOn(prefix));
  });

  it("ends the span of a run that fails on another worker with its error", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const agent = makeAgent("broken", { provider: failingModel() });
    await runtimes.start([agent], backendOn(prefix));
    const submitter = await runtimes.start([agent], backendOn(prefix), { workers: false });

    const { handle } = await submitTraced(submitter, "broken", "hello");
    const result = await handle.result();
    expect(result.status).toBe("failed");
    await until("the run's span to end", async () => runSpansOf("broken").length === 1);
    const [run] = runSpansOf("broken");
    expect(run?.attributes["harnessx.run.status"]).toBe("failed");
    expect(run?.attributes["error.type"]).toBe(result.error?.name);
    expect(run?.attributes["harnessx.run.iterations"]).toBe(result.iterations);
  });

  it("ends the span of a run submitted and finished in one process once", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const search = searchTool();
    const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });
    const runtime = await runtimes.start([agent], backendOn(prefix));

    const { request, handle } = await submitTraced(runtime, "support", "cats");
    const result = await handle.result();
    await until("the run's span to end", async () => runSpansOf("support").length === 1);
    const run = expectOneTree(request, "support", handle.runId);
    expect(run.attributes["gen_ai.usage.output_tokens"]).toBe(result.usage.outputTokens);
    // Its worker and the summary both report the end: the span still ends once.
    await runtime.close();
    expect(runSpansOf("support")).toHaveLength(1);
  });

  it("puts a child run's invoke_agent span under its parent's execute_tool span, each run's span with its own totals", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const search = searchTool();
    const researcher = makeAgent("researcher", {
      provider: oneToolModel("search"),
      tools: [search.tool],
    });
    const lead = makeAgent("lead", {
      provider: new ScriptedProvider(
        [
          (request) =>
            request.messages.at(-1)?.role === "tool"
              ? textResponse("Report.")
              : toolCallResponse([{ name: "research", input: { input: "otters" } }]),
        ],
        { loop: true },
      ),
      tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
    });
    await runtimes.start([lead, researcher], backendOn(prefix));
    const submitter = await runtimes.start([lead, researcher], backendOn(prefix), {
      workers: false,
    });

    const { request, handle } = await submitTraced(submitter, "lead", "otters");
    const result = await handle.result();
    expect(result.status).toBe("completed");
    await until("both run spans to end", async () => runSpansOf("lead").length === 1);
    await until("the child's span to end", async () => runSpansOf("researcher").length === 1);
    const [parent] = runSpansOf("lead");
    const [child] = runSpansOf("researcher");
    expect(parent?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    const call = only(tracing.spans(), "execute_tool research");
    expect(call.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
    expect(child?.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(child?.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    const childSearch = only(tracing.spans(), "execute_tool search");
    expect(childSearch.parentSpanContext?.spanId).toBe(child?.spanContext().spanId);
    // Each run's totals on its own span: the child's are not the parent's.
    const childResult = await submitter.handle(`${handle.runId}.call_1`).result();
    expect(child?.attributes["gen_ai.usage.output_tokens"]).toBe(childResult.usage.outputTokens);
    expect(parent?.attributes["gen_ai.usage.output_tokens"]).toBe(result.usage.outputTokens);
    expect(parent?.attributes["harnessx.run.status"]).toBe("completed");
  });

  it("ends the span of a run still parked when its submitter closes, as closed and not observed", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const { agent } = approvalAgent();
    await runtimes.start([agent], backendOn(prefix));
    const submitter = await runtimes.start([agent], backendOn(prefix), { workers: false });

    const { handle } = await submitTraced(submitter, "ops", "/tmp/kept.log");
    expect((await handle.result()).status).toBe("awaiting_approval");
    expect(runSpansOf("ops")).toHaveLength(0);
    await submitter.close();
    const [run] = runSpansOf("ops");
    expect(run?.attributes["harnessx.run.status"]).toBe("closed");
    expect(run?.attributes["harnessx.run.observed"]).toBe(false);
    expect(run?.attributes["gen_ai.usage.output_tokens"]).toBeUndefined();
  });

  it("starts a trace of the run's own, rooted at its invoke_agent span, when nothing was traced at submit", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const search = searchTool();
    const agent = makeAgent("support", { provider: oneToolModel("search"), tools: [search.tool] });
    const runtime = await runtimes.start([agent], backendOn(prefix));

    const handle = await runtime.submit("support", "dogs");
    expect((await handle.result()).status).toBe("completed");
    const stored = (await handle.record()).trace;
    expect(stored?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await until("the tool's span", async () =>
      tracing.spans().some((span) => span.name === "execute_tool search"),
    );
    const [run] = runSpansOf("support");
    expect(run?.parentSpanContext).toBeUndefined();
    const tool = tracing.spans().find((span) => span.name === "execute_tool search");
    expect(tool?.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
  });
});

describe("tracing durable runs on redisBackend() on a Redis Cluster", () => {
  const clusterPrefixes: string[] = [];
  afterEach(async () => {
    await runtimes.closeAll();
    await Promise.all(clusterPrefixes.splice(0).map((prefix) => deleteClusterPrefix(prefix)));
  });

  it("ends a run's one invoke_agent span in the submitter with the run's totals", async () => {
    const prefix = uniqueClusterPrefix();
    clusterPrefixes.push(prefix);
    await expectSubmitterEndsRunSpan(() =>
      redisBackend({
        cluster: clusterNodes(),
        prefix,
        lockDurationMs: 2000,
        stalledIntervalMs: 1000,
      }),
    );
  });
});
