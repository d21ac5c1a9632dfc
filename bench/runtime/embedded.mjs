// The embedded backend's process: one AgentRuntime on memoryBackend() with its workers, in the
// same process as the submitter (the README's main command does the same). Started by
// bench/runtime.mjs.
//
//   node bench/runtime/embedded.mjs <concurrency>
//
// IPC: "measure" { runs, width } submits `runs` runs (at most `width` submits in flight), waits
// for every result, checks them, and answers { ms }; "close".
import { pino } from "pino";
import { AgentRuntime, memoryBackend } from "../../dist/index.js";
import { benchAgents, checkCompleted, PROMPT, RUN_AGENT } from "./agents.mjs";
import { pool, serve } from "./common.mjs";

const concurrency = Number(process.argv[2]);
const runtime = new AgentRuntime({
  agents: benchAgents(),
  backend: memoryBackend(),
  concurrency,
  logger: pino({ level: "warn" }, pino.destination(2)),
});
await runtime.start();

serve({
  measure: async ({ runs, width }) => {
    const begin = performance.now();
    const results = new Array(runs);
    await pool(runs, width, async (index) => {
      results[index] = (await runtime.submit(RUN_AGENT, PROMPT)).result();
    });
    const settled = await Promise.all(results);
    const ms = performance.now() - begin;
    for (const result of settled) checkCompleted(result);
    return { ms };
  },
  close: async () => {
    await runtime.close({ timeoutMs: 10_000 });
    setImmediate(() => process.exit(0));
  },
});
process.send({ type: "ready" });
