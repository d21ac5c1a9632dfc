// Issue 8: storage that grows with the conversation, not with its square. Runs of 4 and of 40
// iterations (model → tool, again and again, then an answer), each with a tool result of the
// same size, on one Redis, and the bytes Redis received while each run ran (INFO stats
// `total_net_input_bytes`: every write the run's saves, events and jobs sent) and the bytes it
// keeps afterwards (MEMORY USAGE of the run's keys). Prints one JSON document to stdout.
//
//   npm run --silent bench:bytes            # builds first
//   node bench/bytes-per-iteration.mjs --short=4 --long=40 --runs=5
//
// Redis: REDIS_URL, else 127.0.0.1:6379.
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../dist/index.js";
import { readerAgent } from "./lib/reader-agent.mjs";
import { deletePrefix, uniquePrefix } from "./lib/redis.mjs";
import { median, option, round } from "./lib/stats.mjs";

const SHORT = option("short", 4);
const LONG = option("long", 40);
const RUNS = option("runs", 5);
const TARGET_RATIO = 1.5;
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const log = (line) => process.stderr.write(`[bench:bytes] ${line}\n`);

/** The reader agent (bench/lib/reader-agent.mjs) of this benchmark. */
function agentFor(iterations) {
  return readerAgent({ name: `reader-${iterations}`, iterations });
}

const inputBytes = async (redis) =>
  Number(/total_net_input_bytes:(\d+)/.exec(await redis.info("stats"))?.[1] ?? 0);

async function keptBytes(redis, prefix, runId) {
  let total = 0;
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*${runId}*`, "COUNT", 1000);
    cursor = next;
    for (const key of keys) total += Number((await redis.memory("USAGE", key)) ?? 0);
  } while (cursor !== "0");
  return total;
}

async function measure(redis, runtime, prefix, iterations) {
  const sent = [];
  const kept = [];
  for (let index = 0; index < RUNS; index += 1) {
    const before = await inputBytes(redis);
    const handle = await runtime.submit(`reader-${iterations}`, "Read every page.");
    const result = await handle.result();
    if (result.status !== "completed" || result.iterations !== iterations) {
      throw new Error(
        `a ${iterations}-iteration run ended ${result.status} after ${result.iterations}`,
      );
    }
    sent.push((await inputBytes(redis)) - before);
    kept.push(await keptBytes(redis, prefix, handle.runId));
  }
  return {
    iterations,
    bytesSentPerRun: median(sent),
    bytesSentPerIteration: round(median(sent) / iterations),
    bytesKeptPerRun: median(kept),
    bytesKeptPerIteration: round(median(kept) / iterations),
  };
}

async function main() {
  const redis = new Redis(url);
  const prefix = uniquePrefix("bytes");
  const runtime = new AgentRuntime({
    agents: [agentFor(SHORT), agentFor(LONG)],
    backend: redisBackend({ url, prefix }),
    logger: pino({ level: "silent" }),
  });
  await runtime.start();
  try {
    log(`warm-up, then ${RUNS} runs of ${SHORT} and of ${LONG} iterations`);
    await measure(redis, runtime, prefix, SHORT);
    const short = await measure(redis, runtime, prefix, SHORT);
    const long = await measure(redis, runtime, prefix, LONG);
    const ratio = round(long.bytesSentPerIteration / short.bytesSentPerIteration);
    process.stdout.write(
      `${JSON.stringify(
        {
          benchmark: "bytes-per-iteration",
          what: "bytes Redis received per iteration while a run ran (median of runs), and bytes kept",
          short,
          long,
          sentPerIterationLongOverShort: ratio,
          keptPerIterationLongOverShort: round(
            long.bytesKeptPerIteration / short.bytesKeptPerIteration,
          ),
          target: TARGET_RATIO,
          met: ratio <= TARGET_RATIO,
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
