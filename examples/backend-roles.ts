// harnessx/backend: the run store's roles (RunStore, Leases, CallLedger, EventLog, JobQueue),
// for whoever writes or wraps a backend. Here a wrapper watches two roles of memoryBackend():
// the store's fenced saves (one per effect boundary) and the ledger's committed raw results.
import { pino } from "pino";
import type { RunBackend } from "../src/backend.js";
import { AgentRuntime, memoryBackend } from "../src/index.js";
import { demoSupportAgent } from "../src/testing.js";

/** `backend` with its saves and commits told as they happen; every other call goes straight on. */
function watched(backend: RunBackend, say: (line: string) => void): RunBackend {
  return new Proxy(backend, {
    get(target, property) {
      if (property === "saveRun") {
        const saveRun: RunBackend["saveRun"] = async (runId, token, record, options) => {
          const outcome = await target.saveRun(runId, token, record, options);
          const released = outcome.released === undefined ? "" : ", lease given up";
          say(`RunStore save: ${record.phase} (${record.status})${released}`);
          return outcome;
        };
        return saveRun;
      }
      if (property === "commitRaw") {
        const commitRaw: RunBackend["commitRaw"] = async (runId, iteration, result, events) => {
          const won = await target.commitRaw(runId, iteration, result, events);
          say(`CallLedger commit: ${result.toolCallId} of iteration ${iteration}, first: ${won}`);
          return won;
        };
        return commitRaw;
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
}

const logger = pino({ level: "silent" });
const backend = watched(memoryBackend(), (line) => console.log(line));
const runtime = new AgentRuntime({ agents: [demoSupportAgent({ logger })], backend, logger });
await runtime.start();

const run = await runtime.submit("support", "Where is order 42?");
console.log("result:", (await run.result()).status);
await runtime.close();
