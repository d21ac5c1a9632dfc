import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  anthropicProvider,
  openaiProvider,
  type Provider,
  type ProviderResponse,
  tool,
} from "../../../src/index.js";
import { textResponse, toolCallResponse } from "../../../src/testing.js";
import { useTracing } from "../../support/tracing.js";

const tracing = useTracing();

// A reader the test collects from when it wants, as an exporter would on its schedule.
class CollectingReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

let reader: CollectingReader;
let meterProvider: MeterProvider;

beforeEach(() => {
  reader = new CollectingReader();
  meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
});

afterEach(async () => {
  await meterProvider.shutdown();
  metrics.disable();
});

const usage = (input: number, output: number, read: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: read,
  cacheWriteTokens: 0,
});

// A provider that names its own model, as openaiProvider({ model }) does.
function ownModelProvider(responses: ProviderResponse[]): Provider {
  let next = 0;
  return {
    name: "openai",
    model: "gpt-own-model",
    serverAddress: "llm.internal",
    complete: async () => {
      const response = responses[next++];
      if (response === undefined) throw new Error("script ran out");
      return response;
    },
  };
}

const lookup = tool({
  name: "lookup",
  description: "Looks up.",
  input: z.object({ q: z.string() }),
  handler: async ({ q }) => `found ${q}`,
});

describe("what the built-in providers tell the traces", () => {
  it("their own model and the host their requests go to", () => {
    const key = { apiKey: "sk-test-0000000000" };
    expect(openaiProvider({ model: "gpt-5-mini", ...key })).toMatchObject({
      model: "gpt-5-mini",
      serverAddress: "api.openai.com",
    });
    expect(
      openaiProvider({ model: "qwen3", api: "chat", baseURL: "http://127.0.0.1:11434/v1" }),
    ).toMatchObject({ model: "qwen3", serverAddress: "127.0.0.1" });
    expect(anthropicProvider({ model: "claude-sonnet-4-5", ...key })).toMatchObject({
      model: "claude-sonnet-4-5",
      serverAddress: "api.anthropic.com",
    });
  });
});

describe("GenAI spans and metrics (SPEC §13)", () => {
  it("name the provider's own model when the config names none, with each call's usage once", async () => {
    const agent = new Agent({
      logger: pino({ level: "silent" }),
      tools: [lookup],
      provider: ownModelProvider([
        {
          ...toolCallResponse([{ name: "lookup", input: { q: "a" } }], {
            model: "gpt-own-model-2026",
          }),
          usage: usage(100, 10, 900),
        },
        { ...textResponse("done", "gpt-own-model-2026"), usage: usage(200, 20, 1000) },
      ]),
    });

    const result = await agent.run("go");
    expect(result.status).toBe("completed");

    const spans = tracing.spans();
    const chats = spans.filter((span) => span.name.startsWith("chat"));
    expect(chats.map((span) => span.name)).toEqual(["chat gpt-own-model", "chat gpt-own-model"]);
    expect(chats.map((span) => span.attributes["gen_ai.usage.input_tokens"])).toEqual([1000, 1200]);
    expect(chats.map((span) => span.attributes["gen_ai.usage.output_tokens"])).toEqual([10, 20]);
    expect(chats.map((span) => span.attributes["server.address"])).toEqual([
      "llm.internal",
      "llm.internal",
    ]);
    const run = spans.find((span) => span.name.startsWith("invoke_agent"));
    expect(run?.attributes).toMatchObject({
      "gen_ai.request.model": "gpt-own-model",
      "gen_ai.usage.input_tokens": 2200,
      "gen_ai.usage.output_tokens": 30,
    });
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain('"default"');

    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const tokens = all.find((metric) => metric.descriptor.name === "gen_ai.client.token.usage");
    const duration = all.find(
      (metric) => metric.descriptor.name === "gen_ai.client.operation.duration",
    );
    expect(tokens?.descriptor.unit).toBe("{token}");
    expect(duration?.descriptor.unit).toBe("s");
    const sums = Object.fromEntries(
      (tokens?.dataPoints ?? []).map((point) => [
        String(point.attributes["gen_ai.token.type"]),
        {
          sum: (point.value as { sum: number; count: number }).sum,
          count: (point.value as { count: number }).count,
        },
      ]),
    );
    expect(sums).toEqual({ input: { sum: 2200, count: 2 }, output: { sum: 30, count: 2 } });
    expect(tokens?.dataPoints[0]?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-own-model",
      "gen_ai.provider.name": "openai",
      "gen_ai.response.model": "gpt-own-model-2026",
    });
    expect(duration?.dataPoints[0]?.value).toMatchObject({ count: 2 });
  });

  it("record a failed call's duration with its error type and no tokens", async () => {
    const agent = new Agent({
      logger: pino({ level: "silent" }),
      provider: { name: "broken", complete: () => Promise.reject(new Error("down")) },
    });

    expect((await agent.run("go")).status).toBe("failed");

    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const duration = all.find(
      (metric) => metric.descriptor.name === "gen_ai.client.operation.duration",
    );
    expect(duration?.dataPoints[0]?.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "broken",
      "error.type": "ProviderError",
    });
    const tokens = all.find((metric) => metric.descriptor.name === "gen_ai.client.token.usage");
    expect(tokens?.dataPoints ?? []).toEqual([]);
  });
});
