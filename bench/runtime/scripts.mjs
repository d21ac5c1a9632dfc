// The Redis server's time in each of the runtime's own Lua scripts, per call of one run.
//
//   node bench/runtime/scripts.mjs [replicas=2000] [rounds=3]
//
// Records, on a private redis-server (REDIS_URL to use another), the commands one real run
// sends about its own keys (the runtime's scripts and plain commands; BullMQ's scripts and the
// blocking reads left out), in order. Then replays that sequence for `replicas` fresh run ids
// (the run id replaced in every key and argument, on a prefix of its own), one position at a
// time: every replica's command of position i in one pipeline, then position i + 1. A
// replica's calls keep their order, so fencing tokens, stored-message counts and the indexes
// go as in the real run; each replica's events channel has a subscriber, as `handle.result()`
// subscribes in the real run. Each position's server time is the INFO commandstats µs delta
// of its command, per call (`usec`: the command's wall time), and redis-server's CPU time
// (INFO cpu, `cpuUsec`: with the parsing of the commands and their replies) per call; of the
// `rounds` replays, the least (on a shared machine, wall time takes in waits for a CPU). Also
// prints redis-server CPU per replayed run. Prints one JSON document to stdout.
//
//   node bench/runtime/scripts.mjs [replicas=200] [rounds=1] --instructions
//     The same on a redis-server run under valgrind's callgrind: each position also gets the
//     server's instructions per call (`instructions`), which do not move with the machine's
//     load as times do (on a shared 2-core machine, ±30 % from one run to the next).
//
// SCRIPTS_DUMP=<file> also writes the recorded run (commands, and the scripts' Lua text by
// SHA) to <file>, to try variants of a script on the same arguments.
// Compare builds with the same replicas: the indexes grow with them.
import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { benchAgents, checkCompleted, PROMPT, RUN_AGENT } from "./agents.mjs";
import { bullmqScripts, commandStats, cpuSeconds, log, round } from "./common.mjs";
import { freePort, launchRedisServer, redisServer, redisVersion } from "./redis-server.mjs";

const positional = process.argv.slice(2).filter((each) => !each.startsWith("--"));
const replicas = Number(positional[0] ?? 2000);
const rounds = Number(positional[1] ?? 3);
/** Count the server's instructions (valgrind callgrind): steady however loaded the machine. */
const instructions = process.argv.includes("--instructions");

/** A runtime script's name, from its first key's kind and its number of keys. */
function scriptName(prefix, keys, argv) {
  const first = String(keys[0])
    .slice(prefix.length + 1)
    .split(":")[0];
  if (first === "lease") {
    return keys.length === 1 ? "renewLease" : keys.length === 2 ? "releaseLease" : "acquireLease";
  }
  if (first === "run") {
    return keys.length === 2 ? "createRun" : keys.length === 4 ? "openToolCall" : "saveRun";
  }
  if (first === "events") {
    const reads = argv.length === 2 && !String(argv[1]).startsWith("{");
    return reads ? "readEvents" : "appendEvents";
  }
  if (first === "cancel") return "requestCancel";
  return `script ${first}/${keys.length}`;
}

const text = (each) => (Buffer.isBuffer(each) ? each.toString() : String(each));

/** The commands one run sends about its own keys, in order: { name, args, label, bytes }. */
async function recordRun(url) {
  const prefix = `hxbench-scripts-${randomUUID().slice(0, 8)}`;
  const bullmq = new Set((await bullmqScripts()).keys());
  const sent = [];
  let recording = false;
  const original = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function sendCommand(command, stream) {
    if (recording && command?.name !== undefined) sent.push(command);
    return original.call(this, command, stream);
  };
  const runtime = new AgentRuntime({
    agents: benchAgents(),
    backend: redisBackend({ url, prefix }),
    concurrency: 8,
    logger: pino({ level: "silent" }),
  });
  await runtime.start();
  for (let index = 0; index < 5; index++) {
    checkCompleted(await (await runtime.submit(RUN_AGENT, PROMPT)).result());
  }
  // Scripts sent in full once (EVAL after NOSCRIPT), so that the recording names their text.
  if (process.env.SCRIPTS_DUMP) {
    const flusher = new Redis(url);
    await flusher.script("FLUSH");
    flusher.disconnect();
  }
  recording = true;
  const handle = await runtime.submit(RUN_AGENT, PROMPT);
  checkCompleted(await handle.result());
  await new Promise((resolve) => setTimeout(resolve, 50));
  recording = false;
  await runtime.close({ timeoutMs: 10_000 });
  Redis.prototype.sendCommand = original;
  const { runId } = handle;
  const sequence = [];
  const texts = {};
  for (const command of sent) {
    const name = command.name.toLowerCase();
    const args = command.args.map(text);
    if (!args.some((each) => each.includes(runId))) continue;
    if (/^(subscribe|unsubscribe|bzpopmin|xread)$/.test(name)) continue;
    if (name === "eval") {
      const sha = createHash("sha1").update(args[0]).digest("hex");
      if (bullmq.has(sha)) continue;
      texts[sha] = args[0];
      args[0] = sha;
      // The EVALSHA it follows was answered NOSCRIPT.
      const refused = sequence.findLastIndex((each) => each.args[0] === sha);
      if (refused >= 0) sequence.splice(refused, 1);
    }
    if ((name === "evalsha" || name === "eval") && bullmq.has(args[0])) continue;
    let label = `${name} ${
      String(args[0])
        .slice(prefix.length + 1)
        .split(":")[0]
    }`;
    if (name === "evalsha" || name === "eval") {
      const count = Number(args[1]);
      label = scriptName(prefix, args.slice(2, 2 + count), args.slice(2 + count));
    }
    const bytes = args.reduce((sum, each) => sum + Buffer.byteLength(each), 0);
    sequence.push({ name: name === "eval" ? "evalsha" : name, args, label, bytes });
  }
  return { prefix, runId, sequence, texts };
}

/** A redis-server under callgrind, its collection reset and dumped by `count(work)`. */
async function callgrindServer() {
  const directory = mkdtempSync(join(tmpdir(), "hxbench-callgrind-"));
  const server = await launchRedisServer(
    await freePort(),
    (args) => [
      "valgrind",
      [
        "--tool=callgrind",
        `--callgrind-out-file=${join(directory, "out")}`,
        "redis-server",
        ...args,
      ],
    ],
    30_000,
  );
  const { url, child } = server;
  const control = (option) =>
    execFileSync("callgrind_control", [option, String(child.pid)], { stdio: "ignore" });
  let dumps = 0;
  return {
    url,
    /** The server's instructions while `work` runs. */
    async count(work) {
      control("-z");
      await work();
      control("-d");
      dumps += 1;
      const text = readFileSync(join(directory, `out.${dumps}`), "utf8");
      return Number(/^summary: (\d+)/m.exec(text)?.[1] ?? Number.NaN);
    },
    stop: async () => {
      await server.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The recorded command for a replica: its prefix and run id replaced. */
function replicaArgs(recorded, args, prefix, runId) {
  return args.map((each) =>
    each.replaceAll(recorded.runId, runId).replaceAll(recorded.prefix, prefix),
  );
}

/** One replay: µs per call of each position, and server CPU ms per replayed run. */
async function replay(url, recorded, counter) {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const subscriber = new Redis(url, { maxRetriesPerRequest: null });
  subscriber.on("message", () => {});
  const prefix = `hxbench-scripts-${randomUUID().slice(0, 8)}`;
  const runIds = Array.from({ length: replicas }, () => randomUUID());
  // The scripts must be cached: the recorded run loaded them on this server, but with
  // REDIS_URL another may have flushed them meanwhile.
  const eventChannels = runIds.map(
    (runId) =>
      replicaArgs(recorded, [`${recorded.prefix}:events:${recorded.runId}`], prefix, runId)[0],
  );
  for (let at = 0; at < eventChannels.length; at += 500) {
    await subscriber.subscribe(...eventChannels.slice(at, at + 500));
  }
  const perPosition = [];
  const cpuBefore = await cpuSeconds(redis);
  for (const step of recorded.sequence) {
    const cpuStepBefore = await cpuSeconds(redis);
    const before = await commandStats(redis);
    const pipeline = redis.pipeline();
    for (const runId of runIds) {
      pipeline.call(step.name, ...replicaArgs(recorded, step.args, prefix, runId));
    }
    let replies;
    const counted = counter
      ? await counter.count(async () => {
          replies = await pipeline.exec();
        })
      : undefined;
    if (!counter) replies = await pipeline.exec();
    const failed = replies.find(([error]) => error);
    if (failed) throw failed[0];
    const after = await commandStats(redis);
    const cpuStepAfter = await cpuSeconds(redis);
    const stat = step.name;
    perPosition.push({
      usec:
        (after.get(stat).usec - (before.get(stat)?.usec ?? 0)) /
        (after.get(stat).calls - (before.get(stat)?.calls ?? 0)),
      cpuUsec: ((cpuStepAfter - cpuStepBefore) * 1e6) / replicas,
      ...(counted === undefined ? {} : { instructions: counted / replicas }),
    });
  }
  const cpuMs = ((await cpuSeconds(redis)) - cpuBefore) * 1000;
  // Clean up (pruning by SCAN would weigh on the next round's figures: it is done after).
  const keys = [];
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== "0");
  for (let at = 0; at < keys.length; at += 500) await redis.del(...keys.slice(at, at + 500));
  subscriber.disconnect();
  redis.disconnect();
  return { perPosition, cpuMsPerRun: cpuMs / replicas };
}

const server = instructions ? await callgrindServer() : await redisServer();
try {
  const probe = new Redis(server.url);
  const version = await redisVersion(probe);
  probe.disconnect();
  log(`recording one run on ${server.url}`);
  const recorded = await recordRun(server.url);
  if (process.env.SCRIPTS_DUMP) {
    const { writeFileSync } = await import("node:fs");
    writeFileSync(process.env.SCRIPTS_DUMP, JSON.stringify(recorded, null, 1));
  }
  // Load every recorded script (a replay must not answer NOSCRIPT).
  const loader = new Redis(server.url);
  for (const step of recorded.sequence) {
    if (step.name !== "evalsha") continue;
    if (step.args[0].length !== 40) {
      step.args[0] = await loader.script("LOAD", step.args[0]);
    }
  }
  loader.disconnect();
  const results = [];
  for (let index = 0; index < rounds; index++) {
    log(`replay ${index + 1}/${rounds}: ${recorded.sequence.length} commands × ${replicas}`);
    results.push(await replay(server.url, recorded, instructions ? server : undefined));
  }
  // The least of the rounds: on a loaded machine a command's wall time (commandstats) takes in
  // the time the server waited for a CPU; the least is the nearest to its own cost.
  const least = (values) => round(Math.min(...values), 1);
  const calls = recorded.sequence.map((step, at) => ({
    call: step.label,
    usec: least(results.map((each) => each.perPosition[at].usec)),
    cpuUsec: least(results.map((each) => each.perPosition[at].cpuUsec)),
    ...(instructions
      ? {
          instructions: Math.round(
            Math.min(...results.map((each) => each.perPosition[at].instructions)),
          ),
        }
      : {}),
    argumentBytes: step.bytes,
  }));
  const byScript = {};
  for (const { call, usec, cpuUsec, instructions: counted } of calls) {
    const entry = byScript[call] ?? { calls: 0, usec: 0, cpuUsec: 0 };
    entry.calls += 1;
    entry.usec = round(entry.usec + usec, 1);
    entry.cpuUsec = round(entry.cpuUsec + cpuUsec, 1);
    if (counted !== undefined) entry.instructions = (entry.instructions ?? 0) + counted;
    byScript[call] = entry;
  }
  const scripts = calls.filter((_, at) => recorded.sequence[at].name === "evalsha");
  console.log(
    JSON.stringify(
      {
        redis: version,
        replicas,
        rounds,
        perRun: {
          scriptUsec: round(
            scripts.reduce((sum, each) => sum + each.usec, 0),
            1,
          ),
          commandUsec: round(
            calls.reduce((sum, each) => sum + each.usec, 0),
            1,
          ),
          scriptCpuUsec: round(
            scripts.reduce((sum, each) => sum + each.cpuUsec, 0),
            1,
          ),
          ...(instructions
            ? { scriptInstructions: scripts.reduce((sum, each) => sum + each.instructions, 0) }
            : {}),
          serverCpuMs: round(Math.min(...results.map((each) => each.cpuMsPerRun)), 3),
          argumentBytes: calls.reduce((sum, each) => sum + each.argumentBytes, 0),
        },
        byScript,
        calls,
      },
      null,
      2,
    ),
  );
} finally {
  await server.stop();
}
