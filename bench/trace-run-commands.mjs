// Prints every Redis command one durable run sends (MONITOR), to count round trips.
//   node bench/trace-run-commands.mjs [redis-url]
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../dist/index.js";
import { benchAgents, PROMPT, RUN_AGENT } from "./runtime/agents.mjs";

const url = process.argv[2] ?? "redis://127.0.0.1:6379";
const prefix = `hxtrace-${process.pid}`;
const runtime = new AgentRuntime({
  agents: benchAgents(),
  backend: redisBackend({ url, prefix }),
  logger: pino({ level: "silent" }),
});
await runtime.start();
// one warm-up run, so connection set-up and script loads are not counted
await (await runtime.submit(RUN_AGENT, PROMPT)).result();
const monitor = await new Redis(url).monitor();
const lines = [];
monitor.on("monitor", (time, args, source) => lines.push({ time, source, args }));
await new Promise((r) => setTimeout(r, 300));
lines.length = 0;
const started = performance.now();
const handle = await runtime.submit(RUN_AGENT, PROMPT);
await handle.result();
const ms = performance.now() - started;
await new Promise((r) => setTimeout(r, 300));
monitor.disconnect();
const blocking = new Set(["bzpopmin", "brpoplpush", "blmove", "bzpopmax"]);
const t0 = Number(lines[0]?.time ?? 0);
for (const { time, source, args } of lines) {
  const name = String(args[0]).toLowerCase();
  const shown = args
    .slice(0, name === "evalsha" || name === "eval" ? 4 : 3)
    .map((a) => String(a).slice(0, 60))
    .join(" ");
  process.stdout.write(
    `${((Number(time) - t0) * 1000).toFixed(2).padStart(8)} ${source.padEnd(22)} ${blocking.has(name) ? "(blocking) " : ""}${shown}\n`,
  );
}
process.stdout.write(`${lines.length} commands, run ${ms.toFixed(1)} ms\n`);
await runtime.close();
process.exit(0);
