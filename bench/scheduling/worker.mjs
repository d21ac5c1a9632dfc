// A worker process of bench/scheduling.mjs: the scheduling agents on redisBackend(), built
// from dist. `node --expose-gc bench/scheduling/worker.mjs` with REDIS_URL, HX_PREFIX and
// HX_CONCURRENCY ("default" or steps,tools). Prints one JSON line a second to stdout:
// {"at", "heap" (heapUsed after a GC), "inFlight" (model calls in flight), "calls"}.
// Agents: "tooling" (model, 1 tool, model; each call takes HX_LATENCY_MS), "limited" (one
// call of HX_LIMITED_LATENCY_MS under HX_RPM requests a minute; each call's start is pushed to
// the Redis list <prefix>:bench:calls). SIGTERM closes the runtime and exits.
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { pino } from "pino";
import { z } from "zod";
import { Agent, AgentRuntime, redisBackend, tool } from "../../dist/index.js";
import { textResponse, toolCallResponse } from "../../dist/testing.js";

const url = process.env.REDIS_URL;
const prefix = process.env.HX_PREFIX;
const latencyMs = Number(process.env.HX_LATENCY_MS ?? 1000);
const limitedLatencyMs = Number(process.env.HX_LIMITED_LATENCY_MS ?? 200);
const rpm = Number(process.env.HX_RPM ?? 600);
const concurrencySetting = process.env.HX_CONCURRENCY ?? "default";
const notes = new Redis(url, { maxRetriesPerRequest: null });

let inFlight = 0;
let calls = 0;
const tooling = new Agent({
  config: { name: "tooling", model: "slow" },
  provider: {
    name: "bench",
    async complete(request) {
      inFlight += 1;
      calls += 1;
      try {
        await sleep(latencyMs);
      } finally {
        inFlight -= 1;
      }
      const last = request.messages.at(-1);
      return last?.role === "tool"
        ? textResponse("done")
        : toolCallResponse([{ name: "lookup", input: { query: "x" } }]);
    },
  },
  tools: [
    tool({
      name: "lookup",
      description: "Look a thing up.",
      input: z.object({ query: z.string() }),
      handler: async ({ query }) => `found ${query}`,
    }),
  ],
  logger: pino({ level: "silent" }),
});
const limited = new Agent({
  config: { name: "limited", model: "m", rateLimit: { requestsPerMinute: rpm } },
  provider: {
    name: "shared",
    async complete() {
      calls += 1;
      await notes.rpush(`${prefix}:bench:calls`, String(Date.now()));
      await sleep(limitedLatencyMs);
      return textResponse("ok");
    },
  },
  logger: pino({ level: "silent" }),
});

const concurrency =
  concurrencySetting === "default"
    ? undefined
    : (([steps, tools]) => ({ steps, tools }))(concurrencySetting.split(",").map(Number));
const runtime = new AgentRuntime({
  agents: [tooling, limited],
  backend: redisBackend({ url, prefix }),
  ...(concurrency === undefined ? {} : { concurrency }),
  logger: pino({ level: "warn" }, pino.destination(2)),
});
await runtime.start();

const report = () => {
  globalThis.gc?.();
  process.stdout.write(
    `${JSON.stringify({ at: Date.now(), heap: process.memoryUsage().heapUsed, inFlight, calls })}\n`,
  );
};
report();
const timer = setInterval(report, 1000);
process.once("SIGTERM", () => {
  clearInterval(timer);
  runtime
    .close({ timeoutMs: 5000 })
    .then(() => notes.quit())
    .finally(() => process.exit(0));
});
