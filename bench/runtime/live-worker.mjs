// The worker process of bench/live.mjs: an AgentRuntime with workers whose model streams
// text deltas, each stamped with the wall-clock time it was yielded (µs since the epoch,
// `performance.timeOrigin + performance.now()`, comparable across processes on one machine).
// Also publishes raw pub/sub messages stamped the same way, for the side-by-side baseline.
//
//   node bench/runtime/live-worker.mjs <prefix> <deltas per run> <gap ms>
//
// IPC: "publish" { channel, count, gapMs } sends raw stamped messages; "close"; "ready" once up.
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { REDIS_URL, serve } from "./common.mjs";
import { liveAgent, stamp } from "./live-agent.mjs";

const [prefix, deltasArgument, gapArgument] = process.argv.slice(2);
const deltas = Number(deltasArgument);
const gapMs = Number(gapArgument);

const backend = redisBackend({ url: REDIS_URL, prefix });
const logger = pino({ level: process.env.HARNESSX_LOG_LEVEL ?? "warn" }, pino.destination(2));
const runtime = new AgentRuntime({
  agents: [liveAgent({ deltas, gapMs })],
  backend,
  concurrency: 64,
  logger,
});
await runtime.start();
const publisher = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

serve({
  publish: async ({ channel, count, gapMs: gap }) => {
    for (let index = 0; index < count; index += 1) {
      await publisher.publish(channel, stamp());
      await sleep(gap);
    }
    return {};
  },
  close: async () => {
    await runtime.close({ timeoutMs: 10_000 });
    await publisher.quit();
    setImmediate(() => process.exit(0));
  },
});
process.send({ type: "ready" });
