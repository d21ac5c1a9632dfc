import { z } from "zod";
import type { RunBackend } from "../../src/backend.js";
import {
  Agent,
  type AgentOptions,
  AgentRuntime,
  type AgentRuntimeOptions,
  type Message,
  memoryBackend,
  PermissionManager,
  type ProviderRequest,
  type ProviderResponse,
  type RunEvent,
  redisBackend,
  type ToolResult,
  tool,
  type Usage,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { withOverrides } from "../support/backend-overrides.js";
import { silent } from "../support/silent.js";
import { deletePrefix, redisUrl, uniquePrefix } from "./redis.js";

// Defined once in test/support/; re-exported for the tests that take them from here.
export { collect } from "../support/collect.js";
export { deferred, gate } from "../support/gate.js";
export { rejection } from "../support/rejection.js";
export { silent };

const lastMessage = (messages: readonly Message[]): Message | undefined => messages.at(-1);

function textOf(message: Message | undefined): string {
  return (message?.content ?? [])
    .map((block) =>
      block.type === "text" ? block.text : block.type === "tool_result" ? block.content : "",
    )
    .join("");
}

/**
 * A model that asks for `toolName` with the user's text as `{ query }` (or `{ path }`), then
 * answers with the tool's result. Stateless: any number of runs can share it.
 */
export function oneToolModel(
  toolName: string,
  options: { field?: "query" | "path"; before?: (request: ProviderRequest) => Promise<void> } = {},
): ScriptedProvider {
  const field = options.field ?? "query";
  return new ScriptedProvider(
    [
      async (request): Promise<ProviderResponse> => {
        await options.before?.(request);
        const last = lastMessage(request.messages);
        if (last?.role === "tool") return textResponse(`Answer: ${textOf(last)}`);
        return toolCallResponse([{ name: toolName, input: { [field]: textOf(last) } }]);
      },
    ],
    { loop: true },
  );
}

/** `search`: counts handler calls per query; an optional gate holds each call. */
export function searchTool(options: { gate?: { wait(): Promise<void> } } = {}) {
  const calls = new Map<string, number>();
  const definition = tool({
    name: "search",
    description: "Return a fixture search result for the requested query.",
    input: z.object({ query: z.string() }),
    handler: async ({ query }) => {
      calls.set(query, (calls.get(query) ?? 0) + 1);
      await options.gate?.wait();
      return `Results for ${query}`;
    },
  });
  return {
    tool: definition,
    calls,
    get total() {
      return [...calls.values()].reduce((sum, count) => sum + count, 0);
    },
  };
}

/** `delete_file`: records deletions; an optional gate holds each call. */
export function deleteTool(options: { gate?: { wait(): Promise<void> } } = {}) {
  const deleted: string[] = [];
  const definition = tool({
    name: "delete_file",
    description: "Delete a file.",
    input: z.object({ path: z.string() }),
    handler: async ({ path }) => {
      await options.gate?.wait();
      deleted.push(path);
      return `deleted ${path}`;
    },
  });
  return { tool: definition, deleted };
}

/** Deleting asks a person; anything else is allowed. */
export const approvalPolicy = () =>
  new PermissionManager({
    default: "allow",
    rules: [{ tool: "delete_*", decision: "ask", reason: "deleting needs a person" }],
  });

/** `ops`: an agent whose one tool call (a deletion) waits for approval, and what it deleted. */
export function approvalAgent() {
  const deletions = deleteTool();
  const agent = makeAgent("ops", {
    provider: oneToolModel("delete_file", { field: "path" }),
    tools: [deletions.tool],
    permissions: approvalPolicy(),
  });
  return { agent, deleted: deletions.deleted };
}

export function makeAgent(
  name: string,
  options: Omit<AgentOptions, "config" | "logger"> & {
    maxIterations?: number;
    permissions?: PermissionManager;
  },
): Agent {
  const { maxIterations, ...rest } = options;
  return new Agent({
    ...rest,
    config: { name, ...(maxIterations === undefined ? {} : { maxIterations }) },
    logger: silent,
  });
}

/** Runtimes a test started; `closeAll()` closes them in afterEach. */
export class Runtimes {
  readonly #open: AgentRuntime[] = [];

  async start(
    agents: readonly Agent<unknown>[],
    backend: RunBackend,
    options: {
      workers?: boolean;
      concurrency?: AgentRuntimeOptions["concurrency"];
      deps?: AgentRuntimeOptions["deps"];
    } = {},
  ): Promise<AgentRuntime> {
    const { concurrency = 8, deps, ...start } = options;
    const runtime = new AgentRuntime({
      agents,
      backend,
      logger: silent,
      concurrency,
      ...(deps === undefined ? {} : { deps }),
    });
    this.#open.push(runtime);
    await runtime.start(start);
    return runtime;
  }

  async closeAll(): Promise<void> {
    const open = this.#open.splice(0);
    await Promise.all(open.map((runtime) => runtime.close({ timeoutMs: 5000 })));
  }
}

/**
 * Wraps a backend to watch its leases: how many step attempts found the lease taken, and when
 * a run's lease was released. Everything else goes straight to the real backend.
 */
export function observeLeases(backend: RunBackend, shared = leaseCounters()) {
  const wrapped = withOverrides(backend, {
    async acquireLease(runId) {
      const outcome = await backend.acquireLease(runId);
      if (!outcome.acquired) shared.busy(runId);
      return outcome;
    },
    async releaseLease(runId, token) {
      const outcome = await backend.releaseLease(runId, token);
      shared.released(runId);
      return outcome;
    },
    // A step's last save may give the lease up itself.
    async saveRun(runId, token, record, options) {
      const outcome = await backend.saveRun(runId, token, record, options);
      if (outcome.released !== undefined) shared.released(runId);
      return outcome;
    },
  });
  return { backend: wrapped, counters: shared };
}

/** Counts shared by observed backends (several runtimes on one Redis prefix). */
export function leaseCounters() {
  const busyCounts = new Map<string, number>();
  const releaseCounts = new Map<string, number>();
  const waiters: Array<() => void> = [];
  const changed = () => {
    for (const wake of waiters.splice(0)) wake();
  };
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return {
    busy(runId: string) {
      busyCounts.set(runId, (busyCounts.get(runId) ?? 0) + 1);
      changed();
    },
    released(runId: string) {
      releaseCounts.set(runId, (releaseCounts.get(runId) ?? 0) + 1);
      changed();
    },
    busyCount: (runId: string) => busyCounts.get(runId) ?? 0,
    /** Resolves once `count` step attempts found the run's lease taken. */
    waitForBusy: (runId: string, count: number) =>
      until(() => (busyCounts.get(runId) ?? 0) >= count),
    /** Resolves once the run's lease was released `count` times. */
    waitForReleases: (runId: string, count: number) =>
      until(() => (releaseCounts.get(runId) ?? 0) >= count),
  };
}
export type LeaseCounters = ReturnType<typeof leaseCounters>;

/** A run's events up to and including the first of `type`. */
export async function collectUntil(
  events: AsyncIterable<RunEvent>,
  type: RunEvent["type"],
): Promise<RunEvent[]> {
  const seen: RunEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    if (event.type === type) break;
  }
  return seen;
}

/** A run's events without its text and thinking deltas. */
export const withoutDeltas = (events: readonly RunEvent[]): RunEvent[] =>
  events.filter((event) => event.type !== "text_delta" && event.type !== "thinking_delta");

/** The tokens of `reader`'s two provider calls. */
export const readerUsage: { first: Usage; second: Usage } = {
  first: {
    inputTokens: 120,
    outputTokens: 20,
    cacheReadTokens: 900,
    cacheWriteTokens: 64,
  },
  second: {
    inputTokens: 35,
    outputTokens: 7,
    cacheReadTokens: 1020,
    cacheWriteTokens: 0,
  },
};

/** `reader`: calls `fetch_page` and `word_count` at once, then answers; its middleware shortens pages. */
export function readerAgent() {
  const fetchPage = tool({
    name: "fetch_page",
    description: "Fetch a page.",
    input: z.object({ url: z.string() }),
    handler: async ({ url }) => `<html>a long page at ${url}</html>`,
  });
  const wordCount = tool({
    name: "word_count",
    description: "Count words.",
    input: z.object({ text: z.string() }),
    handler: async ({ text }) => String(text.split(" ").length),
  });
  const withUsage = (response: ProviderResponse, usage: Usage, model: string) => ({
    ...response,
    usage,
    model,
  });
  const provider = new ScriptedProvider(
    [
      withUsage(
        toolCallResponse([
          { name: "fetch_page", input: { url: "https://example.test/a" } },
          { name: "word_count", input: { text: "three short words" } },
        ]),
        readerUsage.first,
        "model-large",
      ),
      withUsage(textResponse("Read it."), readerUsage.second, "model-small"),
    ],
    { loop: true },
  );
  return makeAgent("reader", {
    provider,
    tools: [fetchPage, wordCount],
    middleware: [
      {
        afterToolExecution: async (result: ToolResult): Promise<ToolResult> =>
          result.content.startsWith("<html>")
            ? { ...result, content: `summary of ${result.content.length} characters` }
            : result,
      },
    ],
  });
}

/** `cleaner`: its one call (`delete_cache`) waits for a person too, under another tool name. */
export function cleanerAgent() {
  const clean = tool({
    name: "delete_cache",
    description: "Deletes a cache.",
    input: z.object({ path: z.string() }),
    handler: async ({ path }) => `cleaned ${path}`,
  });
  return makeAgent("cleaner", {
    provider: oneToolModel("delete_cache", { field: "path" }),
    tools: [clean],
    permissions: approvalPolicy(),
  });
}

/**
 * The backends a `describe.each` runs its runtimes on: memory, and Redis under a fresh prefix
 * whose keys `closers` deletes when the test's closers run.
 */
export function memoryAndRedisBackends(
  closers: Array<() => Promise<unknown>>,
): Array<[string, () => RunBackend]> {
  return [
    ["memoryBackend()", () => memoryBackend()],
    [
      "redisBackend()",
      () => {
        const prefix = uniquePrefix();
        closers.push(() => deletePrefix(prefix));
        return redisBackend({ url: redisUrl(), prefix });
      },
    ],
  ];
}
