// bench:approvals — parked calls decided at once on Redis: a 2-person quorum approved by two
// client processes at the same time, next to one approver per call, in the same run (SPEC §7.1,
// issue #30; target: the quorum within 1.5× the single approver's time to all dispatched).
//
//   npm run bench:approvals [-- --calls 5000 --rounds 5 --width 64]
//
// Each round: a fresh prefix, one worker process (an AgentRuntime with workers, the `bank`
// agent: one `wire` call a run, asked of 1 or 2 people), `calls` runs submitted and parked,
// then the approver processes (one, or two deciding as "alice" and "bob" at once) approve every
// call; the figure is the time from the first approval sent to the last handler run. Modes
// alternate round by round; medians of `rounds`. CPU per process: user + system of the worker
// and of each approver over the approval phase, and redis-server's (INFO cpu).
//
// The same file is the child processes: `node bench/approvals.mjs worker <prefix> <needed>` and
// `node bench/approvals.mjs approver <prefix>`.
import { cpus, loadavg } from "node:os";
import { pino } from "pino";
import { z } from "zod";
import { Agent, AgentRuntime, PermissionManager, redisBackend, tool } from "../dist/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../dist/testing.js";
import { serve, spawnChild } from "./lib/children.mjs";
import { connect, cpuSeconds, deletePrefix, REDIS_URL, uniquePrefix } from "./lib/redis.mjs";
import { median, now, option, pool, round } from "./lib/stats.mjs";

const silent = pino({ level: "silent" });
const TOOL_CALL_ID = "call_1";

/** The `bank` agent: wires once a run, asked of `needed` people; counts its handler runs. */
function bankAgent(needed, onWire) {
  return new Agent({
    provider: new ScriptedProvider(
      [
        async (request) =>
          request.messages.at(-1)?.role === "tool"
            ? textResponse("done")
            : toolCallResponse([{ name: "wire", input: { to: "acme", amount: 900 } }]),
      ],
      { loop: true },
    ),
    tools: [
      tool({
        name: "wire",
        description: "Wire money.",
        input: z.object({ to: z.string(), amount: z.number() }),
        handler: async (_input, context) => {
          onWire(context.runId);
          return "wired";
        },
      }),
    ],
    permissions: new PermissionManager({
      rules: [{ tool: "wire", decision: "ask", approvals: needed }],
    }),
    config: { name: "bank" },
    logger: silent,
  });
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function workerChild(prefix, needed) {
  // Handler runs are at least once (a job whose lock lapsed on a starved host runs again):
  // the runs wired count once each, and the extra runs are reported.
  const wiredRuns = new Set();
  let handlerRuns = 0;
  const runtime = new AgentRuntime({
    agents: [
      bankAgent(needed, (runId) => {
        handlerRuns++;
        wiredRuns.add(runId);
      }),
    ],
    backend: redisBackend({ url: REDIS_URL, prefix }),
    logger: silent,
    concurrency: { steps: 256, tools: 64 },
  });
  await runtime.start();
  serve({
    wired: () => ({ wired: wiredRuns.size, handlerRuns }),
    cpu: () => ({ cpu: cpuMicros() }),
    close: async () => {
      await runtime.close({ timeoutMs: 5000 });
      process.exit(0);
    },
  });
  process.send({ type: "ready" });
}

async function approverChild(prefix) {
  const runtime = new AgentRuntime({
    agents: [],
    backend: redisBackend({ url: REDIS_URL, prefix }),
    logger: silent,
  });
  await runtime.start({ workers: false });
  serve({
    approve: async ({ runIds, by, width }) => {
      const cpuBefore = cpuMicros();
      const begin = now();
      await pool(runIds.length, width, (index) =>
        runtime.approve(runIds[index], TOOL_CALL_ID, { by }),
      );
      return { ms: now() - begin, cpuMs: (cpuMicros() - cpuBefore) / 1000 };
    },
    close: async () => {
      await runtime.close({ timeoutMs: 5000 });
      process.exit(0);
    },
  });
  process.send({ type: "ready" });
}

const self = new URL(import.meta.url);

async function waitFor(condition, what, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One round: `calls` parked runs, approved by `approvers` (names) at once; its figures. */
async function round1(redis, { calls, width, approvers }) {
  const prefix = uniquePrefix("approvals");
  const needed = approvers.length;
  const worker = await spawnChild(self, ["worker", prefix, String(needed)]);
  const clients = await Promise.all(approvers.map(() => spawnChild(self, ["approver", prefix])));
  const submitter = new AgentRuntime({
    agents: [bankAgent(needed, () => {})],
    backend: redisBackend({ url: REDIS_URL, prefix }),
    logger: silent,
  });
  try {
    await submitter.start({ workers: false });
    const parkedIndex = `${prefix}:idx:status:awaiting_approval`;
    const handles = await submitter.submitMany(
      "bank",
      Array.from({ length: calls }, (_, index) => `pay ${index}`),
    );
    await waitFor(async () => (await redis.zcard(parkedIndex)) >= calls, "parked runs");
    const runIds = handles.map((handle) => handle.runId);
    const [workerCpuBefore, redisBefore] = await Promise.all([
      worker.request("cpu").then((reply) => reply.cpu),
      cpuSeconds(redis),
    ]);
    const begin = now();
    const approvals = Promise.all(
      clients.map((client, at) => client.request("approve", { runIds, by: approvers[at], width })),
    );
    await waitFor(async () => (await worker.request("wired")).wired >= calls, "dispatched calls");
    const ms = now() - begin;
    const decided = await approvals;
    const [workerCpuAfter, redisAfter] = await Promise.all([
      worker.request("cpu").then((reply) => reply.cpu),
      cpuSeconds(redis),
    ]);
    const { wired, handlerRuns } = await worker.request("wired");
    if (wired !== calls) throw new Error(`expected ${calls} runs wired, got ${wired}`);
    return {
      ms,
      repeatedHandlerRuns: handlerRuns - wired,
      cpuMs: {
        worker: (workerCpuAfter - workerCpuBefore) / 1000,
        approvers: decided.map((each) => each.cpuMs),
        redis: (redisAfter - redisBefore) * 1000,
      },
    };
  } finally {
    await submitter.close({ timeoutMs: 5000 });
    await Promise.all([worker, ...clients].map((child) => child.close()));
    await deletePrefix(redis, prefix);
  }
}

const summary = (rounds) => ({
  allDispatchedMs: round(median(rounds.map((each) => each.ms))),
  rounds: rounds.map((each) => round(each.ms)),
  repeatedHandlerRuns: rounds.map((each) => each.repeatedHandlerRuns),
  cpuMsPerProcess: {
    worker: round(median(rounds.map((each) => each.cpuMs.worker))),
    approvers: rounds[0].cpuMs.approvers.map((_, at) =>
      round(median(rounds.map((each) => each.cpuMs.approvers[at]))),
    ),
    redis: round(median(rounds.map((each) => each.cpuMs.redis))),
  },
});

async function main() {
  const calls = option("calls", 5000);
  const rounds = option("rounds", 5);
  const width = option("width", 64);
  const redis = connect();
  const single = [];
  const quorum = [];
  try {
    for (let at = 0; at < rounds; at++) {
      // Alternating, so that a slow stretch of a shared host weighs on both alike.
      process.stderr.write(`round ${at + 1}/${rounds}: single approver\n`);
      single.push(await round1(redis, { calls, width, approvers: ["alice"] }));
      process.stderr.write(`round ${at + 1}/${rounds}: 2-person quorum, two clients at once\n`);
      quorum.push(await round1(redis, { calls, width, approvers: ["alice", "bob"] }));
    }
  } finally {
    redis.disconnect();
  }
  const singleFigures = summary(single);
  const quorumFigures = summary(quorum);
  const ratio = round(quorumFigures.allDispatchedMs / singleFigures.allDispatchedMs);
  const report = {
    benchmark: "approvals",
    host: { cpus: cpus().length, loadavg: loadavg().map((each) => round(each)) },
    settings: { calls, rounds, width },
    singleApprover: singleFigures,
    twoPersonQuorum: quorumFigures,
    quorumToSingle: ratio,
    target: { quorumToSingle: 1.5 },
    met: ratio <= 1.5,
  };
  console.log(JSON.stringify(report, null, 2));
}

const [role, prefix, needed] = process.argv.slice(2);
if (role === "worker") await workerChild(prefix, Number(needed));
else if (role === "approver") await approverChild(prefix);
else await main();
