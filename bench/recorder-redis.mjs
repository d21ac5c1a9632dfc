// Issue 11: Redis bytes per recorded iteration. Runs of 4 and of 40 iterations (model → tool,
// again and again, then an answer; each tool result the same size) on redisBackend(), with and
// without a FlightRecorder, side by side: the bytes the recording keeps (MEMORY USAGE of the
// run's recording list, and its entries' JSON), what storing each request whole would have
// taken instead, and the bytes Redis received per iteration with the recorder on and off.
// Prints one JSON document to stdout.
//
//   npm run --silent bench:recorder-redis          # builds first
//   node bench/recorder-redis.mjs --short=4 --long=40 --runs=5
//
// Redis: REDIS_URL, else 127.0.0.1:6379.
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, FlightRecorder, redisBackend } from "../dist/index.js";
import { readerAgent } from "./lib/reader-agent.mjs";
import { deletePrefix, uniquePrefix } from "./lib/redis.mjs";
import { median, option, round } from "./lib/stats.mjs";

const SHORT = option("short", 4);
const LONG = option("long", 40);
const RUNS = option("runs", 5);
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const log = (line) => process.stderr.write(`[bench:recorder-redis] ${line}\n`);

/** The reader agent (bench/lib/reader-agent.mjs) of this benchmark. */
function agentFor(name, iterations, recorder) {
  return readerAgent({ name, iterations, recorder, systemPrompt: "You read pages." });
}

const inputBytes = async (redis) =>
  Number(/total_net_input_bytes:(\d+)/.exec(await redis.info("stats"))?.[1] ?? 0);

async function measure(redis, runtime, prefix, iterations) {
  const sent = { on: [], off: [] };
  const kept = [];
  const json = [];
  const whole = [];
  for (let index = 0; index < RUNS; index += 1) {
    for (const variant of ["off", "on"]) {
      const before = await inputBytes(redis);
      const handle = await runtime.submit(`${variant}-${iterations}`, "Read every page.");
      const result = await handle.result();
      if (result.status !== "completed" || result.iterations !== iterations) {
        throw new Error(`a ${iterations}-iteration run ended ${result.status}`);
      }
      sent[variant].push((await inputBytes(redis)) - before);
      if (variant === "off") continue;
      const key = `${prefix}:rec:${handle.runId}`;
      kept.push(Number((await redis.memory("USAGE", key)) ?? 0));
      json.push(
        (await redis.lrange(key, 0, -1)).reduce((sum, item) => sum + Buffer.byteLength(item), 0),
      );
      const entries = await runtime.recording(handle.runId);
      whole.push(entries.reduce((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry)), 0));
    }
  }
  const perIteration = (values) => round(median(values) / iterations);
  return {
    iterations,
    recordingBytesKeptPerIteration: perIteration(kept),
    recordingJsonBytesPerIteration: perIteration(json),
    wholeRequestsJsonBytesPerIteration: perIteration(whole),
    bytesSentPerIterationRecorderOff: perIteration(sent.off),
    bytesSentPerIterationRecorderOn: perIteration(sent.on),
  };
}

async function main() {
  const redis = new Redis(url);
  const prefix = uniquePrefix("recorder");
  const agents = [SHORT, LONG].flatMap((iterations) => [
    agentFor(`off-${iterations}`, iterations),
    agentFor(`on-${iterations}`, iterations, new FlightRecorder()),
  ]);
  const runtime = new AgentRuntime({
    agents,
    backend: redisBackend({ url, prefix }),
    logger: pino({ level: "silent" }),
  });
  await runtime.start();
  try {
    log(`warm-up, then ${RUNS} runs of ${SHORT} and of ${LONG} iterations, recorder off and on`);
    await measure(redis, runtime, prefix, SHORT);
    const short = await measure(redis, runtime, prefix, SHORT);
    const long = await measure(redis, runtime, prefix, LONG);
    process.stdout.write(
      `${JSON.stringify(
        {
          benchmark: "recorder-redis",
          what: "Redis bytes per recorded iteration (median of runs): kept by the recording, and received with the recorder off and on",
          short,
          long,
          recordingKeptPerIterationLongOverShort: round(
            long.recordingBytesKeptPerIteration / short.recordingBytesKeptPerIteration,
          ),
          wholeRequestsPerIterationLongOverShort: round(
            long.wholeRequestsJsonBytesPerIteration / short.wholeRequestsJsonBytesPerIteration,
          ),
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await runtime.close({ timeoutMs: 5000 });
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}

main().catch((error) => {
  log(`failed: ${error instanceof Error ? error.stack : String(error)}`);
  process.exitCode = 1;
});
