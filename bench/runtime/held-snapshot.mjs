// Heap snapshots of one process holding runs at their model call: what a held run retains.
// A worker and a submitter in this process on redisBackend; snapshot "before" with nothing held,
// then "held" with <count> runs of the held agent waiting at their first model call.
// Analyse with bench/runtime/snapshot-diff.mjs.
//
//   node --expose-gc bench/runtime/held-snapshot.mjs [count=256] [dir=/tmp]

import { setTimeout as sleep } from "node:timers/promises";
import { writeHeapSnapshot } from "node:v8";
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { benchAgents, HELD_AGENT, heldCalls, PROMPT, RUN_AGENT, releaseHeld } from "./agents.mjs";
import { connect, deletePrefix, pool, REDIS_URL, settledHeap, uniquePrefix } from "./common.mjs";

const count = Number(process.argv[2] ?? 256);
const dir = process.argv[3] ?? "/tmp";
const prefix = uniquePrefix("heapsnap");
const redis = connect();
const runtime = new AgentRuntime({
  agents: benchAgents(),
  backend: redisBackend({ url: REDIS_URL, prefix }),
  concurrency: count + 64,
  logger: pino({ level: "warn" }, pino.destination(2)),
});
await runtime.start();
const until = async (condition) => {
  while (!(await condition())) await sleep(10);
};
const completed = `${prefix}:idx:status:completed`;
const runAll = async (agent, n) => {
  const target = (await redis.zcard(completed)) + n;
  await pool(n, 64, () => runtime.submit(agent, PROMPT));
  return () => until(async () => (await redis.zcard(completed)) >= target);
};
try {
  await (await runAll(RUN_AGENT, 500))();
  const warm = await runAll(HELD_AGENT, count);
  await until(() => heldCalls() >= count);
  releaseHeld();
  await warm();
  const before = settledHeap();
  const beforeFile = writeHeapSnapshot(`${dir}/before.heapsnapshot`);
  const done = await runAll(HELD_AGENT, count);
  await until(() => heldCalls() >= count);
  await sleep(200);
  const held = settledHeap();
  const heldFile = writeHeapSnapshot(`${dir}/held.heapsnapshot`);
  process.stderr.write(
    `${count} held: ${Math.round((held - before) / count)} B a run (${beforeFile}, ${heldFile})\n`,
  );
  releaseHeld();
  await done();
} finally {
  await runtime.close({ timeoutMs: 10_000 });
  await deletePrefix(redis, prefix);
  redis.disconnect();
}
process.exit(0);
