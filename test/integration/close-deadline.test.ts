// `close({ timeoutMs })` keeps its deadline (SPEC §8): jobs still running then have their
// signals aborted and are left for another worker to recover; jobs that finish in time finish.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentRuntime, redisBackend, tool } from "../../src/index.js";
import { until } from "../support/until.js";
import { gate, makeAgent, oneToolModel, silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

/** A generous bound for a call that must return: reaching it means the call hung. */
const HUNG_AFTER_MS = 20_000;
const SLOW_TEST_MS = 40_000;

const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** "returned" when `promise` settles first, "hung" when the bound comes first. */
async function returnsWithin(promise: Promise<unknown>): Promise<"returned" | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), HUNG_AFTER_MS);
  });
  try {
    return await Promise.race([promise.then(() => "returned" as const), bound]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A `search` tool whose first call waits on `held` (ignoring its signal unless told) and whose
 * later calls answer at once; it records what the first call saw.
 */
function heldSearch(held: { wait(): Promise<void> }) {
  const seen = { calls: 0, firstAborted: false, firstFinished: false };
  const definition = tool({
    name: "search",
    description: "Search.",
    input: z.object({ query: z.string() }),
    handler: async ({ query }, context) => {
      seen.calls += 1;
      if (seen.calls > 1) return `Results for ${query} (call ${seen.calls})`;
      context.signal.addEventListener("abort", () => {
        seen.firstAborted = true;
      });
      await held.wait();
      seen.firstFinished = true;
      return `Results for ${query} (call 1)`;
    },
  });
  return { tool: definition, seen };
}

function runtimeOn(prefix: string, search: ReturnType<typeof heldSearch>) {
  const runtime = new AgentRuntime({
    agents: [makeAgent("hold", { provider: oneToolModel("search"), tools: [search.tool] })],
    backend: redisBackend({
      url: redisUrl(),
      prefix,
      lockDurationMs: 1000,
      stalledIntervalMs: 300,
    }),
    logger: silent,
  });
  cleanups.push(() => runtime.close({ timeoutMs: 100 }));
  return runtime;
}

describe("AgentRuntime.close({ timeoutMs }) on Redis", () => {
  it(
    "returns by its deadline while a handler hangs; another runtime recovers the run",
    async () => {
      const prefix = uniquePrefix();
      cleanups.push(() => deletePrefix(prefix));
      const held = gate();
      cleanups.push(async () => held.open());
      const search = heldSearch(held);
      const first = runtimeOn(prefix, search);
      await first.start();
      const handle = await first.submit("hold", "order 7");
      await held.entered;

      expect(await returnsWithin(first.close({ timeoutMs: 300 }))).toBe("returned");
      expect(search.seen.firstAborted).toBe(true);
      expect(search.seen.firstFinished).toBe(false);

      const second = runtimeOn(prefix, search);
      await second.start();
      const result = await second.handle(handle.runId).result();
      expect(result.status).toBe("completed");
      expect(result.output).toBe("Answer: Results for order 7 (call 2)");
    },
    SLOW_TEST_MS,
  );

  it(
    "honours timeoutMs for a job that finishes later: close returns first, the job is recovered",
    async () => {
      const prefix = uniquePrefix();
      cleanups.push(() => deletePrefix(prefix));
      const held = gate();
      const search = heldSearch(held);
      const first = runtimeOn(prefix, search);
      await first.start();
      const handle = await first.submit("hold", "order 8");
      await held.entered;

      await first.close({ timeoutMs: 300 });
      // The handler is still held when close returned; it finishes only now, too late to count.
      expect(search.seen.firstFinished).toBe(false);
      held.open();

      const second = runtimeOn(prefix, search);
      await second.start();
      const result = await second.handle(handle.runId).result();
      expect(result.status).toBe("completed");
      expect(result.output).toBe("Answer: Results for order 8 (call 2)");
    },
    SLOW_TEST_MS,
  );

  it(
    "waits for a job that finishes before the deadline: its result counts, nothing runs twice",
    async () => {
      const prefix = uniquePrefix();
      cleanups.push(() => deletePrefix(prefix));
      const held = gate();
      const search = heldSearch(held);
      const first = runtimeOn(prefix, search);
      await first.start();
      const handle = await first.submit("hold", "order 9");
      await held.entered;

      const closing = first.close({ timeoutMs: HUNG_AFTER_MS });
      held.open();
      await closing;
      expect(search.seen.firstFinished).toBe(true);
      expect(search.seen.firstAborted).toBe(false);

      const second = runtimeOn(prefix, search);
      await second.start();
      const result = await second.handle(handle.runId).result();
      expect(result.output).toBe("Answer: Results for order 9 (call 1)");
      expect(search.seen.calls).toBe(1);
    },
    SLOW_TEST_MS,
  );
});

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const HANGING_AGENTS = fileURLToPath(new URL("../fixtures/hanging-agents.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** `harnessx worker` from source, with a one-second shutdown deadline. */
function startWorkerCli(prefix: string): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", MAIN, "worker", "--agents", HANGING_AGENTS, "--redis", redisUrl()].concat([
      "--prefix",
      prefix,
    ]),
    {
      cwd: ROOT,
      env: { ...process.env, HARNESSX_SHUTDOWN_MS: "1000", HARNESSX_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
  });
  return { child, output: () => output };
}

/** Waits until the worker's output holds `text`; fails at once when the worker exited first. */
function untilOutput(
  text: string,
  what: string,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  return until(
    what,
    async () => {
      if (child.exitCode !== null)
        throw new Error(`the worker exited before ${what}:\n${output()}`);
      return output().includes(text);
    },
    { timeoutMs: SLOW_TEST_MS, intervalMs: 50 },
  );
}

describe("harnessx worker on SIGTERM", () => {
  it(
    "exits by its shutdown deadline although a handler hangs",
    async () => {
      const prefix = uniquePrefix();
      cleanups.push(() => deletePrefix(prefix));
      const { child, output } = startWorkerCli(prefix);
      await untilOutput('"msg":"worker started"', "it started", child, output);
      const submitter = new AgentRuntime({
        agents: (await import("../fixtures/hanging-agents.js")).agents(),
        backend: redisBackend({ url: redisUrl(), prefix }),
        logger: silent,
      });
      await submitter.start({ workers: false });
      cleanups.push(() => submitter.close());
      await submitter.submit("hang", "anything");
      await untilOutput('"event":"handler_started"', "its handler ran", child, output);

      const exited = once(child, "exit");
      child.kill("SIGTERM");
      expect(await returnsWithin(exited)).toBe("returned");
      expect(child.exitCode).toBe(0);
      expect(output()).toContain('"msg":"worker stopped"');
    },
    SLOW_TEST_MS,
  );
});
