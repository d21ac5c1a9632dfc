// CPU of the submitting process per run: `submit` + `handle.result()` for every run, 64 in
// flight, the runs worked by one harnessx worker process (as bench/runtime.mjs has them).
//
//   node [--cpu-prof] bench/runtime/submitter.mjs [runs=2000]
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { benchAgents, PROMPT, RUN_AGENT } from "./agents.mjs";
import {
  connect,
  deletePrefix,
  pool,
  REDIS_URL,
  round,
  spawnChild,
  uniquePrefix,
} from "./common.mjs";

const runs = Number(process.argv[2] ?? 2000);
const redis = connect();
const prefix = uniquePrefix("submitter");
const worker = await spawnChild(new URL("./harnessx-worker.mjs", import.meta.url), [prefix, "64"]);
const runtime = new AgentRuntime({
  agents: benchAgents(),
  backend: redisBackend({ url: REDIS_URL, prefix }),
  logger: pino({ level: "silent" }),
});
await runtime.start({ workers: false });
const work = async (count) => {
  await pool(count, 64, async () => {
    const handle = await runtime.submit(RUN_AGENT, PROMPT);
    const result = await handle.result();
    if (result.status !== "completed") throw new Error(`run ${handle.runId}: ${result.status}`);
  });
};
await work(200); // warm-up
const begin = process.cpuUsage();
const started = performance.now();
await work(runs);
const cpu = process.cpuUsage(begin);
const seconds = (performance.now() - started) / 1000;
console.log(
  JSON.stringify({
    runs,
    runsPerSecond: round(runs / seconds, 1),
    submitterCpuMsPerRun: round((cpu.user + cpu.system) / 1000 / runs, 3),
  }),
);
await runtime.close();
await worker.close();
await deletePrefix(redis, prefix);
redis.disconnect();
