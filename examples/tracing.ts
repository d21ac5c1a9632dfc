// Tracing: harnessx writes OpenTelemetry spans through @opentelemetry/api; the application
// brings the SDK. Here an in-memory exporter collects them and the span tree is printed:
// `invoke_agent` per run, `chat` per provider call, `execute_tool` per tool call, with GenAI
// attributes (model, token counts, tool name and call id: never prompts, inputs or results).
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { pino } from "pino";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  injectTraceContext,
  memoryBackend,
  tool,
  withExtractedContext,
} from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

// The application's SDK set-up (NodeSDK or NodeTracerProvider.register() do the same).
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
trace.setGlobalTracerProvider(tracerProvider);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

const weather = tool({
  name: "weather",
  description: "The forecast for a city.",
  input: z.object({ city: z.string() }),
  handler: async ({ city }) => ({ city, forecast: "sunny" }),
});
const agent = new Agent({
  config: { name: "forecaster", model: "model-small" },
  provider: new ScriptedProvider(
    [toolCallResponse([{ name: "weather", input: { city: "Lisbon" } }]), textResponse("Sunny.")],
    { loop: true },
  ),
  tools: [weather],
  logger: pino({ level: "silent" }),
});

await agent.run("Weather in Lisbon?");

// A durable runtime carries the trace in its jobs: the submitting side injects the active
// context into the job's data, the worker runs the step inside it. Shown here in one process.
const app = trace.getTracer("my-app");
const jobData = app.startActiveSpan("handle request", (span) => {
  const carrier = injectTraceContext(); // { traceparent: "00-<trace id>-<span id>-01" }
  span.end();
  return { input: "Weather in Porto?", trace: carrier };
});
await withExtractedContext(jobData.trace, () => agent.run(jobData.input));

// AgentRuntime does it itself: a durable run is one `invoke_agent` span, started at submit (a
// child of the active span) and stored with the run; every step's `chat` and `execute_tool`
// spans, in whatever worker process, are its children. On the memory backend it ends with the
// run and its totals; on Redis it ends at submit (the chat spans carry the usage).
const runtime = new AgentRuntime({
  agents: [agent],
  backend: memoryBackend(),
  logger: pino({ level: "silent" }),
});
await runtime.start();
const durable = await app.startActiveSpan("handle durable request", async (span) => {
  const handle = await runtime.submit("forecaster", "Weather in Faro?");
  span.end();
  return handle;
});
await durable.result();
await runtime.close();

const spans = exporter.getFinishedSpans();
const childrenOf = (parent: ReadableSpan | undefined) =>
  spans
    .filter((span) =>
      parent === undefined
        ? !spans.some((each) => each.spanContext().spanId === span.parentSpanContext?.spanId)
        : span.parentSpanContext?.spanId === parent.spanContext().spanId,
    )
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);

const SHOWN = [
  "gen_ai.request.model",
  "gen_ai.response.finish_reasons",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.tool.call.id",
  "harnessx.run.status",
];
function print(span: ReadableSpan, depth: number): void {
  const shown = SHOWN.filter((key) => span.attributes[key] !== undefined)
    .map((key) => `${key.replace(/^(gen_ai|harnessx)\./, "")}=${String(span.attributes[key])}`)
    .join(" ");
  console.log(`${"  ".repeat(depth)}${span.name}${shown ? `  ${shown}` : ""}`);
  for (const child of childrenOf(span)) print(child, depth + 1);
}
for (const root of childrenOf(undefined)) print(root, 0);
console.log(`traces: ${new Set(spans.map((span) => span.spanContext().traceId)).size}`);
await tracerProvider.shutdown();
