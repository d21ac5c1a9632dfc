// A worker process of bench:children's tree part, as `harnessx worker` would run one: the tree's
// agents on redisBackend with workers.
//
//   node bench/children/tree-worker.mjs <prefix> <concurrency>
//
// IPC: answers "cpu" (process.cpuUsage()), "commands" (Redis commands sent so far: total, and
// scripts by SHA's first 8 characters) and "close"; sends "ready" once its workers are up.
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { serve } from "../lib/children.mjs";
import { REDIS_URL } from "../lib/redis.mjs";
import { treeAgents } from "./tree-agents.mjs";

const [prefix, concurrency] = process.argv.slice(2);

// Counts every command this process's ioredis clients send (the run store's and BullMQ's).
const commands = { total: 0, byName: {} };
const send = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function counted(command, stream) {
  commands.total++;
  const name =
    command.name === "evalsha" ? `evalsha:${String(command.args[0]).slice(0, 8)}` : command.name;
  commands.byName[name] = (commands.byName[name] ?? 0) + 1;
  return send.call(this, command, stream);
};
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
  commands: () => ({ commands: structuredClone(commands) }),
  close: async () => {
    await runtime.close({ timeoutMs: 10_000 });
    setImmediate(() => process.exit(0));
  },
});
process.send({ type: "ready" });
