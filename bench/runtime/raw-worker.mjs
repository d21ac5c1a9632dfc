// The raw BullMQ baseline's worker process: two queues named like the runtime's (`steps`,
// `tools`), each worked at the same concurrency and with the same retention, lock and retry
// settings as harnessx's queues, on one shared ioredis connection (as the runtime does). The
// processors do nothing, except that a job carrying `next` adds the next job of its chain.
//
//   node bench/runtime/raw-worker.mjs <prefix> <concurrency>
//
// A job's data: { chain?: string[] (queue of each job of the chain), at?: number, id?: string }.
// A chained job (a "run" of raw jobs) adds its successor to the queue `chain[at + 1]`; the last
// of the chain, and every unchained job, counts as finished. IPC: sends "progress" with the
// running count of finished jobs and of all processed jobs every 10 ms while it changes;
// answers "cpu" (process.cpuUsage()), "allocStart" / "allocStop" (bytes allocated in between)
// and "close".
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { countAllocations } from "../lib/allocations.mjs";
import { RAW_JOB_OPTIONS, REDIS_URL, serve } from "./common.mjs";

const [prefix, concurrencyArgument] = process.argv.slice(2);
const concurrency = Number(concurrencyArgument);

// The runtime's settings (src/runtime/redis-queues.ts, redisBackend defaults).
const LOCK_DURATION_MS = 30_000;
const defaultJobOptions = RAW_JOB_OPTIONS;

const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const queues = {
  steps: new Queue("steps", { connection, prefix, defaultJobOptions }),
  tools: new Queue("tools", { connection, prefix, defaultJobOptions }),
};

let finished = 0;
let processed = 0;
const processor = async (job) => {
  processed++;
  const { chain, at = 0, id } = job.data;
  if (chain !== undefined && at + 1 < chain.length) {
    await queues[chain[at + 1]].add("raw", { chain, at: at + 1, id }, { jobId: `${id}-${at + 1}` });
    return;
  }
  finished++;
};

const workers = Object.keys(queues).map(
  (name) =>
    new Worker(name, processor, {
      connection,
      prefix,
      concurrency,
      lockDuration: LOCK_DURATION_MS,
      stalledInterval: LOCK_DURATION_MS,
    }),
);
for (const worker of workers) worker.on("error", (error) => process.stderr.write(`${error}\n`));
await Promise.all(workers.map((worker) => worker.waitUntilReady()));

let reported = -1;
const reporter = setInterval(() => {
  if (processed === reported) return;
  reported = processed;
  process.send({ type: "progress", finished, processed });
}, 10);

let allocations;
serve({
  cpu: () => ({ cpu: process.cpuUsage() }),
  allocStart: async () => {
    allocations = await countAllocations();
  },
  allocStop: async () => ({ bytes: await allocations.stop() }),
  close: async () => {
    clearInterval(reporter);
    await Promise.all(workers.map((worker) => worker.close()));
    await Promise.all(Object.values(queues).map((queue) => queue.close()));
    await connection.quit();
    setImmediate(() => process.exit(0));
  },
});
process.send({ type: "ready" });
