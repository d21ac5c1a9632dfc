import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach } from "vitest";

export interface InstalledTracing {
  /** Finished spans, in the order they ended. */
  spans(): ReadableSpan[];
  reset(): void;
  uninstall(): Promise<void>;
}

/** Registers an SDK the way an application would: provider, context manager, W3C propagator. */
export function installTracing(): InstalledTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const disable = () => {
    trace.disable();
    context.disable();
    propagation.disable();
  };
  disable();
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    uninstall: async () => {
      await provider.shutdown();
      disable();
    },
  };
}

/** Installs tracing for the test file's duration; each test starts with no spans. */
export function useTracing(): { spans(): ReadableSpan[] } {
  let tracing: InstalledTracing | undefined;
  beforeAll(() => {
    tracing = installTracing();
  });
  afterAll(async () => {
    await tracing?.uninstall();
  });
  beforeEach(() => tracing?.reset());
  return { spans: () => tracing?.spans() ?? [] };
}

/** The span named `name`; fails the test when there is not exactly one. */
export function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length}`);
  return found[0] as ReadableSpan;
}
