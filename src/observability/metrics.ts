import type { Attributes, Histogram } from "@opentelemetry/api";
import type { Usage } from "../core/values.js";
import { createNoopMeter, metrics } from "./load-otel.js";

// The GenAI client metrics (OpenTelemetry semantic conventions), through @opentelemetry/api
// alone: without a registered meter provider they cost a no-op call.

/** The instrumentation scope of harnessx's metrics. */
export const METER_NAME = "harnessx";

interface Instruments {
  tokens: Histogram;
  duration: Histogram;
}

// Created against the meter provider registered now; a provider registered later is seen on
// the next call (the API's global meter provider is a proxy only until one is set).
let cached: { provider: unknown; instruments: Instruments; recorded: boolean } | undefined;

function instruments(): { instruments: Instruments; recorded: boolean } {
  const provider = metrics.getMeterProvider();
  if (cached?.provider === provider) return cached;
  const meter = provider.getMeter(METER_NAME);
  const created = {
    tokens: meter.createHistogram("gen_ai.client.token.usage", {
      description: "Number of input and output tokens used.",
      unit: "{token}",
      advice: {
        explicitBucketBoundaries: [
          1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
        ],
      },
    }),
    duration: meter.createHistogram("gen_ai.client.operation.duration", {
      description: "GenAI operation duration.",
      unit: "s",
      advice: {
        explicitBucketBoundaries: [
          0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
        ],
      },
    }),
  };
  // The API's no-op meter (no meter provider registered) records nothing.
  cached = { provider, instruments: created, recorded: meter !== createNoopMeter() };
  return cached;
}

/** False while no meter provider is registered: a `chat` call's metrics would go nowhere. */
export const chatMetricsRecorded = (): boolean => instruments().recorded;

/** Records one `chat` call: its duration, and (when it answered) its input and output tokens. */
export function recordChatMetrics(
  attributes: Attributes,
  durationMs: number,
  usage: Usage | undefined,
  errorType: string | undefined,
): void {
  const { tokens, duration } = instruments().instruments;
  duration.record(durationMs / 1000, {
    ...attributes,
    ...(errorType === undefined ? {} : { "error.type": errorType }),
  });
  if (usage === undefined) return;
  // The conventions count cached tokens as input tokens.
  const input = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  tokens.record(input, { ...attributes, "gen_ai.token.type": "input" });
  tokens.record(usage.outputTokens, { ...attributes, "gen_ai.token.type": "output" });
}
