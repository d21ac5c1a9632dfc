// Runs held at their model call longer than the lease lasts, in one Redis-backed process:
// does every step keep its run's lease, and does every run complete once? (issue 33: with 256
// runs held ~8 s, steps logged "lost the run's lease while stepping".) Prints one JSON document.
//
//   node bench/lease-hold.mjs --runs 256 --hold-ms 8000 --lock-ms 3000
//
// Options: --runs (256), --hold-ms how long each model call waits (8000), --lock-ms the
// backend's lockDurationMs (3000), --busy-ms CPU spent synchronously by each model call as it
// answers, a loaded worker's stand-in (2). The warnings are counted by message: "lost the
// run's lease while stepping" should not be among them while the event loop's lag stays under
// half of lockDurationMs (BullMQ's own job locks lapse past that: "worker error").
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Writable } from "node:stream";
import { pino } from "pino";
import { z } from "zod";
import { Agent, AgentRuntime, redisBackend, tool } from "../dist/index.js";
import { textResponse, toolCallResponse } from "../dist/testing.js";
import { connect, deletePrefix, REDIS_URL, uniquePrefix } from "./lib/redis.mjs";
import { option, round } from "./lib/stats.mjs";

const RUNS = option("runs", 256);
const HOLD_MS = option("hold-ms", 8000);
const LOCK_MS = option("lock-ms", 3000);
const BUSY_MS = option("busy-ms", 2);

const busy = (ms) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

// A model whose first call of each run waits HOLD_MS, every call then spending BUSY_MS of CPU.
const heldModel = {
  name: "lease-hold",
  async complete(request) {
    const last = request.messages.at(-1);
    if (last?.role !== "tool") await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    busy(BUSY_MS);
    return last?.role === "tool"
      ? textResponse("done")
      : toolCallResponse([{ name: "noop", input: { query: "x" }, id: "call_1" }]);
  },
};

// Every warning the runtime logs, counted by message.
const warnings = new Map();
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of chunk.toString().split("\n")) {
      if (line === "") continue;
      const entry = JSON.parse(line);
      const { msg } = entry;
      warnings.set(msg, (warnings.get(msg) ?? 0) + 1);
      // LEASE_HOLD_SAMPLES=1: the first two lines of each message, as they come, on stderr.
      if (process.env.LEASE_HOLD_SAMPLES && (warnings.get(msg) ?? 0) <= 2)
        process.stderr.write(`[${Math.round(performance.now())}] ${line.slice(0, 600)}\n`);
    }
    done();
  },
});

const prefix = uniquePrefix("leasehold");
const redis = connect();
const agent = new Agent({
  provider: heldModel,
  config: { name: "held" },
  tools: [
    tool({
      name: "noop",
      description: "Answers ok.",
      input: z.object({ query: z.string() }),
      handler: async () => "ok",
    }),
  ],
  logger: pino({ level: "silent" }),
});
const runtime = new AgentRuntime({
  agents: [agent],
  backend: redisBackend({ url: REDIS_URL, prefix, lockDurationMs: LOCK_MS }),
  concurrency: { steps: RUNS + 16, tools: 32 },
  logger: pino({ level: "warn" }, sink),
});
const lag = monitorEventLoopDelay({ resolution: 10 });
const loadAtStart = loadavg()[0];
try {
  await runtime.start();
  lag.enable();
  const started = performance.now();
  const handles = await Promise.all(
    Array.from({ length: RUNS }, () => runtime.submit("held", "Hold on.")),
  );
  const results = await Promise.all(handles.map((handle) => handle.result()));
  const elapsedMs = performance.now() - started;
  lag.disable();
  const completed = results.filter((result) => result.status === "completed").length;
  // A run that completed once has one provider → tool → provider conversation.
  const once = results.filter((result) => result.messages.length === 4).length;
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: "runs held at their model call past the lease's duration, one process",
        options: { runs: RUNS, holdMs: HOLD_MS, lockDurationMs: LOCK_MS, busyMs: BUSY_MS },
        completed,
        completedOnce: once,
        warnings: Object.fromEntries(warnings),
        eventLoopLagMs: { p50: round(lag.percentile(50) / 1e6), max: round(lag.max / 1e6) },
        elapsedMs: Math.round(elapsedMs),
        loadAverage1m: { start: round(loadAtStart), end: round(loadavg()[0]) },
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await runtime.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
}
