// A harnessx worker process, as `harnessx worker` would run one: the benchmark's agents built
// from dist, an AgentRuntime on redisBackend with workers. Started by bench/runtime.mjs, with
// the young generation `harnessx worker` runs with (src/cli/young-generation.ts) unless told
// otherwise.
//
//   node bench/runtime/harnessx-worker.mjs <prefix> <concurrency>
//
// IPC: answers "counts" (step and tool jobs processed here), "heap" (heapUsed after a forced
// GC), "cpu" (process.cpuUsage()), "allocStart" / "allocStop" (bytes allocated in between),
// "held" (model calls of the held agent waiting here), "release" (lets them answer) and
// "close"; sends "ready" once its workers are up.
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { countAllocations } from "../lib/allocations.mjs";
import { benchAgents, heldCalls, releaseHeld } from "./agents.mjs";
import { REDIS_URL, serve, settledHeap } from "./common.mjs";

const [prefix, concurrencyArgument] = process.argv.slice(2);
const concurrency = Number(concurrencyArgument);

// HARNESSX_BENCH_AUTOPIPELINING=1 or 0: the backend gets one ioredis client, with or without
// enableAutoPipelining, for its run store and BullMQ alike (an experiment of the profile);
// unset, it connects as it does by default.
const autoPipelining = process.env.HARNESSX_BENCH_AUTOPIPELINING;
const connection =
  autoPipelining === undefined
    ? undefined
    : new Redis(REDIS_URL, {
        maxRetriesPerRequest: null,
        enableAutoPipelining: autoPipelining === "1",
      });
const backend = redisBackend({ url: REDIS_URL, prefix, ...(connection ? { connection } : {}) });
// Counts the jobs this process works on, by wrapping the processors the runtime hands over.
const counts = { steps: 0, tools: 0 };
const start = backend.start.bind(backend);
backend.start = (options) =>
  start({
    ...options,
    processors: options.processors && {
      step: (job, delivery) => {
        counts.steps++;
        return options.processors.step(job, delivery);
      },
      tool: (job, delivery) => {
        counts.tools++;
        return options.processors.tool(job, delivery);
      },
    },
  });

const logger = pino({ level: process.env.HARNESSX_LOG_LEVEL ?? "warn" }, pino.destination(2));
const runtime = new AgentRuntime({ agents: benchAgents(), backend, concurrency, logger });
await runtime.start();

let allocations;
serve({
  counts: () => ({ ...counts }),
  allocStart: async () => {
    allocations = await countAllocations();
  },
  allocStop: async () => ({ bytes: await allocations.stop() }),
  held: () => ({ calls: heldCalls() }),
  release: () => releaseHeld(),
  heap: () => ({ heapUsed: settledHeap() }),
  cpu: () => ({ cpu: process.cpuUsage() }),
  close: async () => {
    await runtime.close({ timeoutMs: 10_000 });
    await connection?.quit();
    setImmediate(() => process.exit(0));
  },
});
process.send({ type: "ready" });
