// A child run whose step fails between its last save (finished) and its parent's wake-up: the
// step delivered again (Redis) or given up (memory) commits the child's result and wakes the
// parent; nothing is lost and nothing runs twice (SPEC §14, "Waiting holds nothing").
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Agent, AgentRuntime, memoryBackend, redisBackend } from "../../src/index.js";
import type { RunBackend } from "../../src/store/backend.js";
import { BackendError } from "../../src/store/errors.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { silent } from "./fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "./redis.js";

const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * `backend`, with the first commit of a child's outcome to `runId` (the child's finish, one
 * write with its count) failing as a worker dying there would. Counts those commits.
 */
function failingFirstCommit(backend: RunBackend, runId: string) {
  const commits = { failed: 0, made: 0 };
  const proxy = new Proxy(backend, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      if (property !== "childFinished") {
        return (value as (...args: unknown[]) => unknown).bind(target);
      }
      return (...args: Parameters<RunBackend["childFinished"]>) => {
        const [link, outcome] = args;
        if (link.parentRunId === runId && outcome !== undefined) {
          if (commits.failed === 0) {
            commits.failed += 1;
            return Promise.reject(
              new BackendError("the worker died here", { code: "backend_unavailable" }),
            );
          }
          commits.made += 1;
        }
        return target.childFinished(...args);
      };
    },
  });
  return { backend: proxy, commits };
}

const backends: Array<[string, () => RunBackend]> = [
  ["memory", () => memoryBackend()],
  [
    "redis",
    () => {
      const prefix = uniquePrefix();
      cleanups.push(() => deletePrefix(prefix));
      return redisBackend({
        url: redisUrl(),
        prefix,
        lockDurationMs: 1000,
        stalledIntervalMs: 500,
      });
    },
  ],
];

describe.each(backends)(
  "a child's finish cut off before its parent's wake-up (%s)",
  (_name, backendOf) => {
    it("loses nothing and starts nothing twice", async () => {
      const childModel = new ScriptedProvider([textResponse("notes")], { loop: true });
      const researcher = new Agent({
        provider: childModel,
        config: { name: "researcher" },
        logger: silent,
      });
      const lead = new Agent({
        provider: new ScriptedProvider([
          toolCallResponse([{ name: "research", input: { input: "otters" } }]),
          textResponse("done"),
        ]),
        config: { name: "lead" },
        tools: [researcher.asTool({ name: "research", description: "Research" })],
        logger: silent,
      });
      const { backend, commits } = failingFirstCommit(backendOf(), "parent-1");
      const runtime = new AgentRuntime({
        agents: [lead, researcher],
        backend,
        logger: silent,
      });
      await runtime.start();
      cleanups.push(() => runtime.close({ timeoutMs: 2000 }));
      const handle = await runtime.submit("lead", "go", { runId: "parent-1" });
      const result = await handle.result();
      expect(result.status).toBe("completed");
      const results = result.messages
        .flatMap((message) => message.content)
        .filter((block) => block.type === "tool_result");
      expect(results).toEqual([
        { type: "tool_result", toolCallId: "call_1", content: "notes", isError: false },
      ]);
      expect(childModel.callCount).toBe(1);
      // The cut-off finish was made again, once it could be.
      expect(commits).toEqual({ failed: 1, made: 1 });
      expect(
        (await runtime.list({ parentRunId: "parent-1" })).runs.map((run) => run.status),
      ).toEqual(["completed"]);
    });
  },
);
