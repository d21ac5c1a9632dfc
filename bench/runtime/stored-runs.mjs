// Many runs stored on Redis quickly, for the benchmarks that read them (list.mjs, dashboard.mjs):
// finished-looking run records written straight through the backend's `createRun`, pipelined.
import { pino } from "pino";
import { AgentRuntime, redisBackend } from "../../dist/index.js";
import { round, uniquePrefix } from "./common.mjs";

/** createRun calls in flight while writing runs (auto-pipelined by the backend's client). */
const WRITE_WIDTH = 2000;

const AGENTS = ["support", "billing", "ops", "search"];
const STATUSES = [
  ...Array(12).fill("completed"),
  ...Array(3).fill("failed"),
  "cancelled",
  ...Array(2).fill("awaiting_approval"),
  "running",
  "queued",
];

/**
 * A runtime (no workers) on a fresh prefix holding `runs` runs, written in bulk. With
 * `middleCursor`, also the cursor halfway down the newest-first order (a deep page follows it).
 */
export async function storeWith(
  url,
  runs,
  { log = () => {}, middleCursor: walk = true, part = "list" } = {},
) {
  const prefix = uniquePrefix(part);
  const backend = redisBackend({ url, prefix });
  const runtime = new AgentRuntime({ agents: [], backend, logger: pino({ level: "silent" }) });
  await runtime.start({ workers: false });
  const base = Date.now() - runs * 10;
  const began = performance.now();
  for (let start = 0; start < runs; start += WRITE_WIDTH) {
    const batch = [];
    for (let index = start; index < Math.min(runs, start + WRITE_WIDTH); index += 1) {
      batch.push(backend.createRun(record(index, base)));
    }
    const created = await Promise.all(batch);
    if (created.includes(false)) throw new Error("a run id was written twice");
  }
  const writeSeconds = (performance.now() - began) / 1000;
  log(`${runs} runs written in ${round(writeSeconds)} s`);
  let middleCursor = null;
  for (let skipped = 0; walk && skipped < runs / 2; skipped += 500) {
    const page = await runtime.list({
      limit: 500,
      ...(middleCursor ? { cursor: middleCursor } : {}),
    });
    middleCursor = page.nextCursor;
  }
  return {
    runs,
    prefix,
    runtime,
    middleCursor,
    sessionId: `session-${Math.floor(runs / 2 / 10)}`,
    writeSeconds: round(writeSeconds),
    runsPerSecond: Math.round(runs / writeSeconds),
  };
}

/** Run `index`: ten runs per session, agents and statuses spread as a busy installation's. */
function record(index, base) {
  const runId = `run-${String(index).padStart(7, "0")}`;
  const sessionId = `session-${Math.floor(index / 10)}`;
  const status = STATUSES[index % STATUSES.length];
  const createdAt = base + index * 10;
  const messages = [{ role: "user", content: [{ type: "text", text: `question ${index}` }] }];
  const finished = ["completed", "failed", "cancelled"].includes(status);
  return {
    schemaVersion: 2,
    runId,
    sessionId,
    agent: AGENTS[index % AGENTS.length],
    status,
    phase: finished ? "done" : "compose",
    input: { messages, text: `question ${index}`, maxIterations: 10 },
    snapshot: null,
    result: finished
      ? {
          runId,
          sessionId,
          status,
          output: status === "completed" ? `answer ${index}` : null,
          error: status === "failed" ? { name: "ProviderError", message: "down" } : null,
          pending: [],
          usage: { inputTokens: 120, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 },
          iterations: 2,
          messages: [
            ...messages,
            { role: "assistant", content: [{ type: "text", text: `answer ${index}` }] },
          ],
        }
      : null,
    createdAt,
    updatedAt: createdAt + 5,
  };
}
