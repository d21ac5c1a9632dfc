// Counts the Redis commands one fan-out sends (MONITOR): a parent whose first turn calls an
// agent tool --children times (zero-latency model), to its result; the commands sent by command
// (EVALSHA by its script's SHA), and those executed (scripts' own included), so that round trips per fan-out compare deterministically; with
// --flat, as many runs of the child agent by submitMany instead. --lines prints each command.
//   node bench/children/trace-fanout.mjs [--children 100] [--flat] [--lines]
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { deletePrefix, REDIS_URL, uniquePrefix } from "../lib/redis.mjs";
import { option } from "../lib/stats.mjs";
import { fanOutAgents } from "./fanout-agents.mjs";

const CHILDREN = option("children", 100);
const FLAT = process.argv.includes("--flat");
const logger = pino({ level: "silent" });
const prefix = uniquePrefix("trace-fanout");
const runtime = new AgentRuntime({
  agents: fanOutAgents(CHILDREN),
  backend: redisBackend({ url: REDIS_URL, prefix }),
  logger,
});
await runtime.start();
// A warm-up fan-out, so connection set-up and script loads are not counted.
await (await runtime.submit("lead", "warm up")).result();
const scripts = new Map();
const admin = new Redis(REDIS_URL);
const monitor = await new Redis(REDIS_URL).monitor();
const lines = [];
monitor.on("monitor", (time, args, source) => lines.push({ time, source, args }));
await new Promise((resolve) => setTimeout(resolve, 300));
lines.length = 0;
const started = performance.now();
if (FLAT) {
  const inputs = Array.from({ length: CHILDREN }, (_, index) => `topic ${index}`);
  await Promise.all((await runtime.submitMany("researcher", inputs)).map((each) => each.result()));
} else {
  const result = await (await runtime.submit("lead", "go")).result();
  if (result.status !== "completed") throw new Error(`parent ended ${result.status}`);
}
const ms = performance.now() - started;
await new Promise((resolve) => setTimeout(resolve, 300));
monitor.disconnect();

// Blocking reads and BullMQ's housekeeping come and go with timing: counted apart.
const idle = new Set(["bzpopmin", "brpoplpush", "blmove", "bzpopmax", "ping", "info", "client"]);
async function nameOf(args) {
  const name = String(args[0]).toLowerCase();
  if (name !== "evalsha") return name;
  const sha = String(args[1]);
  if (!scripts.has(sha)) {
    const [exists] = await admin.script("EXISTS", sha);
    scripts.set(sha, exists === 1 ? sha.slice(0, 8) : "?");
  }
  return `evalsha ${scripts.get(sha)}`;
}
// Sent: the commands the processes sent (round trips, pipelined or not), by name; executed:
// those and the ones their scripts ran.
const byName = new Map();
let sent = 0;
let executed = 0;
for (const { args, source } of lines) {
  const name = await nameOf(args);
  if (idle.has(name)) continue;
  executed += 1;
  if (source === "lua") continue;
  sent += 1;
  byName.set(name, (byName.get(name) ?? 0) + 1);
}
if (process.argv.includes("--lines")) {
  const t0 = Number(lines[0]?.time ?? 0);
  for (const { time, source, args } of lines) {
    const shown = args
      .slice(0, 4)
      .map((each) => String(each).slice(0, 60))
      .join(" ");
    process.stderr.write(
      `${((Number(time) - t0) * 1000).toFixed(2).padStart(8)} ${source.padEnd(22)} ${shown}\n`,
    );
  }
}
await runtime.close();
await deletePrefix(admin, prefix);
admin.disconnect();
console.log(
  JSON.stringify(
    {
      children: CHILDREN,
      mode: FLAT ? "flat" : "fan-out",
      sent,
      sentPerChild: Math.round((sent / CHILDREN) * 100) / 100,
      executed,
      byName: Object.fromEntries([...byName].sort((a, b) => b[1] - a[1])),
      ms: Math.round(ms),
    },
    null,
    2,
  ),
);
process.exit(0);
