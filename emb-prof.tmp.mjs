import { pino } from "pino";
import { benchAgents, checkCompleted, PROMPT, RUN_AGENT } from "./bench/runtime/agents.mjs";
import { pool } from "./bench/runtime/common.mjs";
import { AgentRuntime, memoryBackend } from "./dist/index.js";

const runtime = new AgentRuntime({
  agents: benchAgents(),
  backend: memoryBackend(),
  concurrency: 64,
  logger: pino({ level: "warn" }),
});
await runtime.start();
async function measure(runs) {
  const begin = performance.now();
  const cpu0 = process.cpuUsage();
  const results = new Array(runs);
  await pool(runs, 64, async (i) => {
    results[i] = (await runtime.submit(RUN_AGENT, PROMPT)).result();
  });
  const settled = await Promise.all(results);
  for (const r of settled) checkCompleted(r);
  const c = process.cpuUsage(cpu0);
  console.log(
    runs,
    "runs",
    (performance.now() - begin).toFixed(0),
    "ms",
    ((c.user + c.system) / 1000 / runs).toFixed(3),
    "ms cpu/run",
  );
}
await measure(500);
await measure(3000);
await measure(3000);
await runtime.close({ timeoutMs: 5000 });
