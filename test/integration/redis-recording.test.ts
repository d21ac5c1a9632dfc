// A durable run on Redis that parks in one process and resumes in another (SPEC §8, §9, §10):
// the extension's saved state travels with it, its flight recording is whole and in order from
// a third runtime, a redacted canary secret is nowhere in Redis, the logs or the export, and the
// recording replays to the same output and tool calls.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { type Logger, pino } from "pino";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  AgentRuntime,
  FlightRecorder,
  type Message,
  PermissionManager,
  ReplayProvider,
  type RunResult,
  redisBackend,
} from "../../src/index.js";
import { LEDGER, ledgerAgent, REDACTED } from "../fixtures/ledger-agent.js";
import { fixtureArgs } from "../support/fixture-command.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

const WORKER = fileURLToPath(new URL("../fixtures/ledger-worker.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A ledger worker process; resolves once its workers run. Its stderr (debug logs) is kept. */
async function startWorker(prefix: string, canary: string) {
  const child: ChildProcess = spawn(process.execPath, fixtureArgs(WORKER), {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: redisUrl(), HX_PREFIX: prefix, HX_CANARY: canary },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stderr?.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const exited = once(child, "exit");
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output.stdout += chunk.toString();
      if (output.stdout.includes('{"event":"ready"}')) resolve();
    });
    exited.then(
      () => reject(new Error(`the worker exited before it was ready: ${output.stderr}`)),
      reject,
    );
  });
  return {
    output,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Every value stored under `prefix`, whatever its type, as text. */
async function everythingUnder(prefix: string): Promise<Map<string, string>> {
  const client = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  const values = new Map<string, string>();
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        const type = await client.type(key);
        const value =
          type === "string"
            ? await client.get(key)
            : type === "list"
              ? await client.lrange(key, 0, -1)
              : type === "hash"
                ? await client.hgetall(key)
                : type === "set"
                  ? await client.smembers(key)
                  : type === "zset"
                    ? await client.zrange(key, 0, -1, "WITHSCORES")
                    : type === "stream"
                      ? await client.xrange(key, "-", "+")
                      : `unread type ${type}`;
        values.set(key, JSON.stringify(value));
      }
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
  return values;
}

/** A logger that keeps every line, at debug level. */
function keptLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: pino({ level: "debug" }, { write: (line) => lines.push(line) }), lines };
}

const toolCalls = (messages: readonly Message[]) =>
  messages.flatMap((message) =>
    message.content
      .filter((block) => block.type === "tool_use")
      .map(({ name, input }) => ({ name, input })),
  );

const runtimes: AgentRuntime[] = [];
const recorders = new WeakMap<AgentRuntime, unknown>();
const prefixes: string[] = [];
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  await requireRedis();
});

afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close({ timeoutMs: 5000 })));
  await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(prefix)));
});

describe("a durable recorded run on Redis, across processes", () => {
  it("carries saved state, keeps its recording whole and redacted, and replays it", async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const canary = `sk-canary-${randomUUID()}`;
    const logs = keptLogger();
    const runtimeWith = async (workers: boolean) => {
      const agent = ledgerAgent({ canary, logger: logs.logger });
      const runtime = new AgentRuntime({
        agents: [agent],
        backend: redisBackend({ url: redisUrl(), prefix }),
        logger: logs.logger,
      });
      runtimes.push(runtime);
      await runtime.start({ workers });
      recorders.set(runtime, agent.recorder);
      return runtime;
    };
    const decide = async (runtime: AgentRuntime, parked: RunResult) => {
      expect(parked.status).toBe("awaiting_approval");
      await runtime.approve(parked.runId, parked.pending[0]?.toolCallId ?? "", { by: "ops" });
      return runtime.handle(parked.runId).result();
    };

    // Process one (this one) starts the run: AGENT_START saves runs=1, and the transfer parks.
    const first = await runtimeWith(true);
    const parked = await (await first.submit(LEDGER, "move 5", { sessionId: "s1" })).result();
    expect(parked.status).toBe("awaiting_approval");
    await first.close();

    // Process two (a worker) resumes it once approved: its transfer reads the saved runs=1.
    const worker = await startWorker(prefix, canary);
    stops.push(worker.stop);
    const submitter = await runtimeWith(false);
    const done = await decide(submitter, parked);
    expect(done.status).toBe("completed");
    expect(done.output).toBe("DONE: MOVED 5; RUNS=1 (CHECKED)");

    // The session's next run, on the worker, reads and adds to what the first one saved.
    const next = await (await submitter.submit(LEDGER, "move 5", { sessionId: "s1" })).result();
    expect((await decide(submitter, next)).output).toBe("DONE: MOVED 5; RUNS=2 (CHECKED)");

    // A third runtime reads the whole recording of the first run, in order.
    const reader = await runtimeWith(false);
    const recording = await reader.recording(parked.runId);
    expect(
      recording.map((entry) =>
        entry.type === "decision" ? `decision:${entry.decision}:${entry.source}` : entry.type,
      ),
    ).toEqual([
      "run_start",
      "llm_request",
      "llm_response_raw",
      "decision:ask:policy",
      "decision:allow:person",
      "tool_result_raw",
      "llm_request",
      "llm_response_raw",
      "run_end",
    ]);
    const [firstRequest, secondRequest] = recording.filter((entry) => entry.type === "llm_request");
    expect(firstRequest?.request.system).toContain(`Sign transfers with ${REDACTED}.`);
    expect(firstRequest?.request.messages).toEqual(done.messages.slice(0, 1));
    expect(secondRequest?.request.messages).toEqual(done.messages.slice(0, 3));
    // Raw: the result before the middleware marked it, the answer before it was shouted.
    const raw = recording.find((entry) => entry.type === "tool_result_raw");
    expect(raw?.result.content).toBe("moved 5; runs=1");
    const answer = recording.filter((entry) => entry.type === "llm_response_raw").at(-1);
    expect(answer?.response.content).toEqual([
      { type: "text", text: "done: moved 5; runs=1 (checked)" },
    ]);
    expect(recording.at(-1)).toMatchObject({ type: "run_end", output: done.output });

    // The canary was recorded (redacted) and is nowhere: not in Redis, the logs or the export.
    const stored = await everythingUnder(prefix);
    expect([...stored.keys()].some((key) => key.endsWith(`:rec:${parked.runId}`))).toBe(true);
    expect([...stored.values()].some((value) => value.includes(REDACTED))).toBe(true);
    expect([...stored].filter(([, value]) => value.includes(canary))).toEqual([]);
    // The reader's agent recorder reads the backend's recordings since its runtime started.
    const readerRecorder = recorders.get(reader);
    if (!(readerRecorder instanceof FlightRecorder)) throw new Error("no ledger recorder");
    const jsonl = await readerRecorder.exportJsonl(parked.runId);
    expect(jsonl.split("\n")).toHaveLength(recording.length + 1);
    expect(jsonl).toContain(REDACTED);
    expect(jsonl).not.toContain(canary);
    await worker.stop();
    stops.splice(0);
    expect(worker.output.stderr).toContain("ledger worker ready");
    expect(worker.output.stderr).not.toContain(canary);
    // The worker's log is known to be captured (it logged that it was ready).
    expect(logs.lines.filter((line) => line.includes(canary))).toEqual([]);

    // Replayed offline, with no person to ask, the run gives the same output and tool calls.
    const replay = ReplayProvider.fromRecording(await reader.recording(parked.runId));
    const replayed = await ledgerAgent({
      canary,
      logger: pino({ level: "silent" }),
      provider: replay,
      permissions: new PermissionManager({ default: "allow" }),
    }).run("move 5", { sessionId: "s1" });
    expect(replayed.output).toBe(done.output);
    expect(toolCalls(replayed.messages)).toEqual(toolCalls(done.messages));
    expect(toolCalls(done.messages)).toEqual([{ name: "transfer", input: { amount: 5 } }]);
    await replay.assertComplete();
  });
});
