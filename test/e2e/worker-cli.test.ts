import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { AgentRuntime, redisBackend } from "../../src/index.js";
import { demoSupportAgent } from "../../src/testing.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "../integration/redis.js";

const root = new URL("../../", import.meta.url);
const silent = pino({ level: "silent" });

/**
 * Starts `harnessx worker --json` from the built package; resolves once it logs (on stderr) that
 * it started. `stdout()` is what it printed on stdout so far.
 */
async function startWorker(prefix: string): Promise<{ child: ChildProcess; stdout: () => string }> {
  const child = spawn(
    process.execPath,
    ["dist/cli/main.js", "worker", "--agents", "examples/distributed/agents.mjs"].concat([
      "--redis",
      redisUrl(),
      "--prefix",
      prefix,
      "--concurrency",
      "4",
      "--json",
    ]),
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    let log = "";
    child.once("exit", (code) =>
      reject(new Error(`worker exited (${String(code)}):\n${log}\n${stdout}`)),
    );
    // Its log is on stderr: stdout is for --json.
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('"msg":"worker started"')) resolve();
    });
  });
  return { child, stdout: () => stdout };
}

describe("harnessx worker (a separate process)", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("advances runs submitted by another process, then stops cleanly on SIGTERM", async () => {
    await requireRedis();
    const prefix = uniquePrefix();
    cleanups.push(() => deletePrefix(prefix));
    const { child: worker, stdout } = await startWorker(prefix);
    cleanups.push(async () => {
      if (worker.exitCode === null && worker.signalCode === null) {
        const exited = once(worker, "exit");
        worker.kill("SIGKILL");
        await exited;
      }
    });

    const submitter = new AgentRuntime({
      agents: [demoSupportAgent({ logger: silent })],
      backend: redisBackend({ url: redisUrl(), prefix }),
      logger: silent,
    });
    await submitter.start({ workers: false });
    cleanups.push(() => submitter.close());

    const handles = await Promise.all(
      [1, 2, 3].map((index) => submitter.submit("support", `Where is order ${index}?`)),
    );
    const results = await Promise.all(handles.map((handle) => handle.result()));
    expect(results.map((result) => result.output)).toEqual([
      "Done: Order 1: shipped yesterday.",
      "Done: Order 2: shipped yesterday.",
      "Done: Order 3: shipped yesterday.",
    ]);

    const refund = await submitter.submit("support", "Refund order 7");
    const parked = await refund.result();
    expect(parked.status).toBe("awaiting_approval");
    await submitter.approve(refund.runId, parked.pending[0]?.toolCallId ?? "", { by: "test" });
    expect((await refund.result()).output).toBe("Done: Refunded order 7.");

    // "close": its stdout is read to the end.
    const exited = once(worker, "close");
    worker.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    // Nothing but its --json report on stdout: the log went to stderr.
    expect(JSON.parse(stdout())).toEqual({ agents: ["support"], signal: "SIGTERM" });
  });
});
