// A worker process of bench:children's tree part, as `harnessx worker` would run one: the tree's
// agents on redisBackend with workers.
//
//   node bench/children/tree-worker.mjs <prefix> <concurrency>
//
// IPC: answers "cpu" (process.cpuUsage()) and "close"; sends "ready" once its workers are up.
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { serve } from "../lib/children.mjs";
import { REDIS_URL } from "../lib/redis.mjs";
import { treeAgents } from "./tree-agents.mjs";

const [prefix, concurrency] = process.argv.slice(2);
const logger = pino({ level: process.env.HARNESSX_LOG_LEVEL ?? "warn" }, pino.destination(2));
const runtime = new AgentRuntime({
  agents: treeAgents(),
  backend: redisBackend({ url: REDIS_URL, prefix }),
  concurrency: Number(concurrency),
  logger,
});
await runtime.start();
serve({
  cpu: () => ({ cpu: process.cpuUsage() }),
  close: async () => {
    await runtime.close({ timeoutMs: 10_000 });
    setImmediate(() => process.exit(0));
  },
});
process.send({ type: "ready" });
