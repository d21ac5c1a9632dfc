import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type AgentOptions,
  PermissionManager,
  ProviderError,
  TRACER_NAME,
  tool,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../../src/testing.js";
import { only, useTracing } from "../../support/tracing.js";

const tracing = useTracing();

class QuotaError extends Error {
  override name = "QuotaError";
}

const search = tool({
  name: "search",
  description: "Search.",
  input: z.object({ query: z.string() }),
  handler: async ({ query }) => {
    if (query === "over quota") throw new QuotaError("quota for secret-key-123 exceeded");
    return `Results for ${query}`;
  },
});

const makeAgent = (options: AgentOptions) =>
  new Agent({
    logger: pino({ level: "silent" }),
    tools: [search],
    config: { name: "support", model: "model-x", systemPrompt: "Top secret system prompt." },
    ...options,
  });

const cached = {
  ...textResponse("Found it.", "model-x-2026"),
  usage: { inputTokens: 100, outputTokens: 7, cacheReadTokens: 40, cacheWriteTokens: 2 },
};

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe("spans of a direct run", () => {
  it("nest chat and execute_tool under invoke_agent, with GenAI attributes", async () => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "search", input: { query: "private-query-42" } }]),
        cached,
      ]),
    });
    const result = await agent.run("private question", { sessionId: "session-7" });
    expect(result.status).toBe("completed");

    const spans = tracing.spans();
    expect(spans.map((span) => span.name).sort()).toEqual([
      "chat model-x",
      "chat model-x",
      "execute_tool search",
      "invoke_agent support",
    ]);
    const run = only(spans, "invoke_agent support");
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.instrumentationScope.name).toBe(TRACER_NAME);
    for (const span of spans.filter((each) => each !== run)) {
      expect(span.spanContext().traceId).toBe(run.spanContext().traceId);
      expect(parentOf(span)).toBe(run.spanContext().spanId);
    }

    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "support",
      "gen_ai.conversation.id": "session-7",
      "gen_ai.request.model": "model-x",
      "gen_ai.provider.name": "scripted",
      "harnessx.run.id": result.runId,
      "harnessx.run.status": "completed",
      "harnessx.run.iterations": 2,
      // The conventions count cached tokens in input_tokens: 10 + (100 + 40 + 2).
      "gen_ai.usage.input_tokens": 152,
      "gen_ai.usage.output_tokens": 12,
      "gen_ai.usage.cache_read.input_tokens": 40,
      "gen_ai.usage.cache_creation.input_tokens": 2,
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);

    const [first, second] = spans.filter((span) => span.name === "chat model-x");
    expect(first?.kind).toBe(SpanKind.CLIENT);
    expect(first?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "model-x",
      "gen_ai.request.max_tokens": 4096,
      "gen_ai.request.temperature": 1,
      "gen_ai.response.model": "scripted",
      "gen_ai.response.finish_reasons": ["tool_use"],
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 5,
    });
    expect(second?.attributes).toMatchObject({
      "gen_ai.response.model": "model-x-2026",
      "gen_ai.response.finish_reasons": ["end_turn"],
      "gen_ai.usage.input_tokens": 142,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.usage.cache_read.input_tokens": 40,
      "gen_ai.usage.cache_creation.input_tokens": 2,
    });

    const toolSpan = only(spans, "execute_tool search");
    expect(toolSpan.attributes).toEqual({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "search",
      "gen_ai.tool.call.id": "call_1",
      "gen_ai.tool.type": "function",
    });
    expect(toolSpan.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("carries no prompt, input, tool input, result or error message", async () => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "search", input: { query: "private-query-42" } },
          { name: "search", input: { query: "over quota" }, id: "call_2" },
        ]),
        textResponse("private answer"),
      ]),
    });
    await agent.run("private question");
    const recorded = JSON.stringify(
      tracing.spans().map((span) => [span.attributes, span.status, span.events]),
    );
    for (const secret of [
      "private-query-42",
      "over quota",
      "private question",
      "private answer",
      "Top secret",
      "Results for",
      "secret-key-123",
    ]) {
      expect(recorded).not.toContain(secret);
    }
  });

  it("marks a throwing handler's execute_tool span failed by error type; the run goes on", async () => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "search", input: { query: "over quota" } }]),
        textResponse("Sorry."),
      ]),
    });
    expect((await agent.run("go")).status).toBe("completed");
    const toolSpan = only(tracing.spans(), "execute_tool search");
    expect(toolSpan.status).toEqual({ code: SpanStatusCode.ERROR, message: "QuotaError" });
    expect(toolSpan.attributes["error.type"]).toBe("QuotaError");
    expect(only(tracing.spans(), "invoke_agent support").status.code).toBe(SpanStatusCode.UNSET);
  });

  it("marks a failed provider call and the failed run as errors", async () => {
    const agent = makeAgent({
      provider: new ScriptedProvider([
        () => {
          throw new ProviderError("upstream said no to sk-secret");
        },
      ]),
    });
    const result = await agent.run("go");
    expect(result.status).toBe("failed");
    const chat = only(tracing.spans(), "chat model-x");
    expect(chat.status).toEqual({ code: SpanStatusCode.ERROR, message: "ProviderError" });
    const run = only(tracing.spans(), "invoke_agent support");
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: result.error?.name });
    expect(run.attributes["harnessx.run.status"]).toBe("failed");
    expect(JSON.stringify(tracing.spans().map((span) => span.status))).not.toContain("sk-secret");
  });

  it("records no execute_tool span for a call that is denied or invalid", async () => {
    const agent = makeAgent({
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "search", when: (call) => call.input.query === "no", decision: "deny" }],
      }),
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "search", input: { query: "no" } },
          { name: "search", input: { query: 3 }, id: "call_2" },
        ]),
        textResponse("ok"),
      ]),
    });
    expect((await agent.run("go")).status).toBe("completed");
    expect(tracing.spans().filter((span) => span.name.startsWith("execute_tool"))).toEqual([]);
  });

  it("gives a parked run's segment and its resumption one invoke_agent span each", async () => {
    const agent = makeAgent({
      permissions: new PermissionManager({ default: "ask" }),
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "search", input: { query: "a" } }]),
        textResponse("done"),
      ]),
    });
    const parked = await agent.run("go");
    expect(parked.status).toBe("awaiting_approval");
    const resumed = await agent.resume(parked.runId, { decisions: { call_1: "allow" } });
    expect(resumed.status).toBe("completed");
    const runs = tracing.spans().filter((span) => span.name === "invoke_agent support");
    expect(runs.map((span) => span.attributes["harnessx.run.status"])).toEqual([
      "awaiting_approval",
      "completed",
    ]);
    expect(runs.map((span) => span.attributes["harnessx.run.id"])).toEqual([
      parked.runId,
      parked.runId,
    ]);
    expect(runs.every((span) => span.status.code === SpanStatusCode.UNSET)).toBe(true);
    const toolSpan = only(tracing.spans(), "execute_tool search");
    expect(parentOf(toolSpan)).toBe(runs[1]?.spanContext().spanId);
  });
});
