// Durable child runs (SPEC §14, agents as tools) on every backend: run on memory, Redis and a
// Redis Cluster by describeBackendContract.
import { afterEach, describe, expect, it } from "vitest";
import {
  Agent,
  AgentRuntime,
  ConfigError,
  type ContentBlock,
  type Provider,
  type ProviderRequest,
  type RunResult,
} from "../../src/index.js";
import type { RunBackend } from "../../src/store/backend.js";
import { isTerminal } from "../../src/store/schemas.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import type { BackendFactory } from "./backend-contract.js";
import { Runtimes, silent } from "./fixtures.js";

type ToolResultBlock = Extract<ContentBlock, { type: "tool_result" }>;

export const toolResults = (result: RunResult): ToolResultBlock[] =>
  result.messages
    .flatMap((message) => message.content)
    .filter((block): block is ToolResultBlock => block.type === "tool_result");

export const lastUserText = (request: ProviderRequest): string => {
  const block = request.messages.at(-1)?.content.at(-1);
  return block?.type === "text" ? block.text : "";
};

/** A child model that answers with its input, after `delayMs` for inputs named "slow…". */
export const echoModel = (): Provider =>
  new ScriptedProvider(
    [
      async (request) => {
        const text = lastUserText(request);
        if (text.startsWith("slow")) await new Promise((resolve) => setTimeout(resolve, 150));
        return textResponse(`notes on ${text}`);
      },
    ],
    { loop: true },
  );

/** A lead whose first turn calls `research` once per topic, then answers "done". */
export const leadModel = (topics: readonly string[], tool = "research"): Provider =>
  new ScriptedProvider(
    [
      toolCallResponse(
        topics.map((topic, index) => ({ name: tool, input: { input: topic }, id: `c${index}` })),
      ),
      textResponse("done"),
    ],
    { loop: true },
  );

export const agent = (name: string, options: ConstructorParameters<typeof Agent>[0] = {}) =>
  new Agent({ ...options, config: { name, ...options.config }, logger: silent });

export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let tries = 0; tries < 200; tries += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("timed out waiting");
}

/** Polls `read` until `done` (a generous bound: the host may be loaded; nothing is timed). */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let tries = 0; tries < 1200; tries += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("timed out waiting");
}

/**
 * `backend`, counting the steps queued for `parentRunId` (its wake-ups) and holding the start of
 * its call `heldCall`'s child (the call's tool job, or the child's first step, whichever comes
 * first) until the runs `finishFirst` finished: what busy queues do to the last call of a turn.
 * `whileHeld` runs as the hold ends.
 */
function holdingLastCall(
  backend: RunBackend,
  hold: {
    parentRunId: string;
    heldCall: string;
    finishFirst: readonly string[];
    whileHeld: () => Promise<void>;
  },
): { backend: RunBackend; wakeUps: () => number } {
  let wakeUps = 0;
  let held = false;
  const watched = new Proxy(backend, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (property === "enqueueStep") {
        return (...args: Parameters<RunBackend["enqueueStep"]>) => {
          if (args[0] === hold.parentRunId) wakeUps += 1;
          return target.enqueueStep(...args);
        };
      }
      const holdOnce = async () => {
        if (held) return;
        held = true;
        await eventually(
          () => Promise.all(hold.finishFirst.map((id) => target.runStatus(id))),
          (statuses) => statuses.every((status) => status !== undefined && isTerminal(status)),
        );
        await hold.whileHeld();
      };
      if (property === "openToolCall") {
        return async (...args: Parameters<RunBackend["openToolCall"]>) => {
          if (args[0] === hold.parentRunId && args[2] === hold.heldCall) await holdOnce();
          return target.openToolCall(...args);
        };
      }
      if (property !== "acquireLease") return bound;
      return async (...args: Parameters<RunBackend["acquireLease"]>) => {
        if (args[0] === `${hold.parentRunId}.${hold.heldCall}`) await holdOnce();
        return target.acquireLease(...args);
      };
    },
  });
  return { backend: watched, wakeUps: () => wakeUps };
}

export function describeChildrenContract(name: string, factory: BackendFactory): void {
  describe(`child runs (agents as tools) on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    const start = (agents: readonly Agent<unknown>[]): Promise<AgentRuntime> =>
      runtimes.start(agents, factory.create());

    it("runs each call's child as a run of its own, in parallel, results in call order", async () => {
      const researcher = agent("researcher", { provider: echoModel() });
      const lead = agent("lead", {
        provider: leadModel(["slow otters", "badgers"]),
        tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
      });
      const runtime = await start([lead, researcher]);
      const handle = await runtime.submit("lead", "write");
      const result = await handle.result();
      expect(result.status).toBe("completed");
      expect(
        toolResults(result).map((each) => [each.toolCallId, each.content, each.isError]),
      ).toEqual([
        ["c0", "notes on slow otters", false],
        ["c1", "notes on badgers", false],
      ]);
      const children = [`${handle.runId}.c0`, `${handle.runId}.c1`];
      const detail = await runtime.get(handle.runId);
      expect(detail.children?.map((each) => each.runId)).toEqual(children);
      const child = await runtime.get(children[0] as string);
      expect(child).toMatchObject({
        agent: "researcher",
        status: "completed",
        parentRunId: handle.runId,
        parentToolCallId: "c0",
        rootRunId: handle.runId,
        sessionId: detail.sessionId,
      });
      expect((await runtime.handle(children[1] as string).result()).output).toBe(
        "notes on badgers",
      );
      const { events } = await runtime.events(handle.runId);
      const childEvents = events.filter(
        (event) => event.type === "child_started" || event.type === "child_finished",
      );
      expect(childEvents.filter((event) => event.type === "child_started")).toEqual([
        { type: "child_started", childRunId: children[0], agent: "researcher", toolCallId: "c0" },
        { type: "child_started", childRunId: children[1], agent: "researcher", toolCallId: "c1" },
      ]);
      // The slow child finishes last.
      expect(childEvents.filter((event) => event.type === "child_finished")).toEqual([
        {
          type: "child_finished",
          childRunId: children[1],
          agent: "researcher",
          toolCallId: "c1",
          status: "completed",
        },
        {
          type: "child_finished",
          childRunId: children[0],
          agent: "researcher",
          toolCallId: "c0",
          status: "completed",
        },
      ]);
      const listed = await runtime.list({ parentRunId: handle.runId });
      expect(listed.runs.map((each) => each.runId).sort()).toEqual(children);
      const tree = await runtime.list({ rootRunId: handle.runId });
      expect(tree.runs.map((each) => each.runId).sort()).toEqual(
        [handle.runId, ...children].sort(),
      );
    });

    it("keeps the parent waiting while its children run, and wakes it once, even when children finish before the last one starts", async () => {
      const researcher = agent("researcher", { provider: echoModel() });
      const lead = agent("lead", {
        provider: leadModel(["a", "b", "c"]),
        tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
      });
      const parentRunId = "fan-out";
      const children = ["c0", "c1", "c2"].map((call) => `${parentRunId}.${call}`);
      let runtime: AgentRuntime | undefined;
      const seen: { status?: string | undefined; listed?: string[]; waitingCount?: number } = {};
      const watched = holdingLastCall(factory.create(), {
        parentRunId,
        heldCall: "c2",
        finishFirst: children.slice(0, 2),
        whileHeld: async () => {
          // Two children finished; the third has not started: the parent still waits.
          const reader = runtime as AgentRuntime;
          seen.status = (await reader.get(parentRunId)).status;
          seen.listed = (await reader.list({ status: "waiting" })).runs.map((run) => run.runId);
          seen.waitingCount = (await reader.overview({ window: "1h" })).counts.waiting;
        },
      });
      runtime = await runtimes.start([lead, researcher], watched.backend);
      const handle = await runtime.submit("lead", "write", { runId: parentRunId });
      const result = await handle.result();
      expect(result.status).toBe("completed");
      expect(toolResults(result).map((each) => [each.toolCallId, each.content])).toEqual([
        ["c0", "notes on a"],
        ["c1", "notes on b"],
        ["c2", "notes on c"],
      ]);
      expect(seen).toEqual({ status: "waiting", listed: [parentRunId], waitingCount: 1 });
      // One wake-up: the last child's.
      expect(watched.wakeUps()).toBe(1);
      const { events } = await runtime.events(parentRunId);
      expect(events.filter((event) => event.type === "child_started")).toHaveLength(3);
      expect(events.filter((event) => event.type === "child_finished")).toHaveLength(3);
      expect((await runtime.list({ status: "waiting" })).runs).toEqual([]);
      expect((await runtime.overview({ window: "1h" })).counts.waiting).toBe(0);
    });

    it("starts the other children of a turn when one child's input is refused, and fails only its call", async () => {
      const researcher = agent("researcher", { provider: echoModel() });
      const lead = agent("lead", {
        provider: leadModel(["otters", "x".repeat(400)]),
        tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
      });
      const runtime = new AgentRuntime({
        agents: [lead, researcher],
        backend: factory.create(),
        logger: silent,
        limits: { maxInputBytes: 200 },
      });
      await runtime.start();
      try {
        const handle = await runtime.submit("lead", "write");
        const result = await handle.result();
        expect(result.status).toBe("completed");
        const [first, second] = toolResults(result);
        expect([first?.toolCallId, first?.content, first?.isError]).toEqual([
          "c0",
          "notes on otters",
          false,
        ]);
        expect([second?.toolCallId, second?.isError]).toEqual(["c1", true]);
        expect(second?.content).toContain("The child run could not start");
        expect(
          (await runtime.list({ parentRunId: handle.runId })).runs.map((run) => run.runId),
        ).toEqual([`${handle.runId}.c0`]);
      } finally {
        await runtime.close({ timeoutMs: 5000 });
      }
    });

    it("lists a three-level tree by root, and gives a failed child's code to its parent", async () => {
      const failing = agent("failing"); // no provider: fails at once
      const middle = agent("middle", {
        provider: leadModel(["x"], "failing"),
        tools: [failing.asTool({ description: "Fails" })],
      });
      const lead = agent("lead", {
        provider: leadModel(["y"], "middle"),
        tools: [middle.asTool({ description: "Middle" })],
      });
      const runtime = await start([lead, middle, failing]);
      const handle = await runtime.submit("lead", "go");
      const result = await handle.result();
      expect(result.status).toBe("completed");
      const middleId = `${handle.runId}.c0`;
      const middleResult = await runtime.handle(middleId).result();
      const [failed] = toolResults(middleResult);
      expect(failed?.isError).toBe(true);
      expect(failed?.content).toContain("provider_missing");
      const tree = await runtime.list({ rootRunId: handle.runId });
      expect(tree.runs.map((each) => [each.runId, each.rootRunId ?? null]).sort()).toEqual(
        [
          [handle.runId, null],
          [middleId, handle.runId],
          [`${middleId}.c0`, handle.runId],
        ].sort(),
      );
      const page = await runtime.list({ rootRunId: handle.runId, limit: 2 });
      expect(page.runs).toHaveLength(2);
      const rest = await runtime.list({
        rootRunId: handle.runId,
        limit: 2,
        cursor: page.nextCursor,
      });
      expect(rest.runs).toHaveLength(1);
      expect(rest.nextCursor).toBeNull();
      // Any list, not only a tree's, names a child's parent and root (the grandchild's root is
      // the tree's, not its parent).
      const grandchildren = await runtime.list({ agent: "failing" });
      expect(
        grandchildren.runs.map((each) => [each.runId, each.parentRunId, each.rootRunId]),
      ).toEqual([[`${middleId}.c0`, middleId, handle.runId]]);
      const roots = await runtime.list({ agent: "lead" });
      expect(roots.runs[0]?.rootRunId).toBeUndefined();
      expect(roots.runs[0]?.parentRunId).toBeUndefined();
    });

    it("filters a tree's list by q, since and until as the flat list does", async () => {
      const researcher = agent("researcher", { provider: echoModel() });
      // The lead's first answer comes 30 ms after its run was created, so the children are
      // created strictly after the root.
      const lead = agent("lead", {
        provider: new ScriptedProvider(
          [
            async () => {
              await new Promise((resolve) => setTimeout(resolve, 30));
              return toolCallResponse([
                { name: "research", input: { input: "otters" }, id: "c0" },
                { name: "research", input: { input: "badgers" }, id: "c1" },
              ]);
            },
            textResponse("done"),
          ],
          { loop: true },
        ),
        tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
      });
      const runtime = await start([lead, researcher]);
      const handle = await runtime.submit("lead", "write", { sessionId: "tree-session" });
      await handle.result();
      const other = await runtime.submit("lead", "other", { sessionId: "other-session" });
      await other.result();
      const root = handle.runId;
      const ids = (page: { runs: readonly { runId: string }[] }) =>
        page.runs.map((each) => each.runId).sort();
      const whole = await runtime.list({ rootRunId: root });
      const created = new Map(whole.runs.map((each) => [each.runId, each.createdAt]));
      const firstChild = Math.min(created.get(`${root}.c0`) ?? 0, created.get(`${root}.c1`) ?? 0);
      expect(firstChild).toBeGreaterThan(created.get(root) ?? Number.POSITIVE_INFINITY);

      // q: a run id prefix, or a session one of the tree's runs is in.
      expect(ids(await runtime.list({ rootRunId: root, q: `${root}.c1` }))).toEqual([`${root}.c1`]);
      expect(ids(await runtime.list({ rootRunId: root, q: `${root}.c` }))).toEqual([
        `${root}.c0`,
        `${root}.c1`,
      ]);
      expect(ids(await runtime.list({ rootRunId: root, q: "tree-session" }))).toEqual(ids(whole));
      expect((await runtime.list({ rootRunId: root, q: "other-session" })).runs).toEqual([]);
      expect(ids(await runtime.list({ parentRunId: root, q: `${root}.c0` }))).toEqual([
        `${root}.c0`,
      ]);
      expect((await runtime.list({ rootRunId: root, sessionId: "other-session" })).runs).toEqual(
        [],
      );

      // since and until: [since, until).
      expect(ids(await runtime.list({ rootRunId: root, since: firstChild }))).toEqual([
        `${root}.c0`,
        `${root}.c1`,
      ]);
      expect(ids(await runtime.list({ rootRunId: root, until: firstChild }))).toEqual([root]);
      const page = await runtime.list({ rootRunId: root, since: firstChild, limit: 1 });
      expect(page.runs).toHaveLength(1);
      const rest = await runtime.list({
        rootRunId: root,
        since: firstChild,
        limit: 1,
        cursor: page.nextCursor,
      });
      expect([...page.runs, ...rest.runs].map((each) => each.runId).sort()).toEqual([
        `${root}.c0`,
        `${root}.c1`,
      ]);
      expect(rest.nextCursor).toBeNull();

      // Checked as the flat list checks them.
      await expect(
        runtime.list({ rootRunId: root, since: firstChild, until: firstChild - 1 }),
      ).rejects.toThrow(/until: .* is before since/);
      await expect(
        runtime.list({ rootRunId: root, q: "x", sessionId: "tree-session" }),
      ).rejects.toBeInstanceOf(ConfigError);
    });

    it("refuses at start() an agent tool of an agent the runtime does not know", async () => {
      const researcher = agent("researcher", { provider: echoModel() });
      const lead = agent("lead", {
        provider: leadModel(["x"]),
        tools: [researcher.asTool({ name: "research", description: "Research" })],
      });
      const refused = await runtimes.start([lead], factory.create()).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as ConfigError).message).toContain('"researcher"');
    });

    it("refuses a call deeper than the parent's maxDepth with depth_exceeded", async () => {
      const researcher = agent("researcher", { provider: echoModel() });
      const lead = agent("lead", {
        provider: leadModel(["otters"]),
        config: { maxDepth: 0 },
        tools: [researcher.asTool({ name: "research", description: "Research" })],
      });
      const runtime = await start([lead, researcher]);
      const result = await (await runtime.submit("lead", "go")).result();
      expect(toolResults(result)[0]?.content).toContain("depth_exceeded");
      expect(await runtime.list({ parentRunId: result.runId })).toEqual({
        runs: [],
        nextCursor: null,
      });
    });

    it("cancels every unfinished descendant with the root, and a child cancelled alone fails its call", async () => {
      const stuck: Provider = {
        name: "stuck",
        complete: (_request, options) =>
          new Promise((_resolve, reject) => {
            options?.signal?.addEventListener("abort", () => reject(options.signal?.reason));
          }),
      };
      const waiting = agent("waiting", { provider: stuck });
      const lead = agent("lead", {
        provider: leadModel(["a", "b"], "waiting"),
        tools: [waiting.asTool({ description: "Waits" })],
      });
      const runtime = await start([lead, waiting]);
      const alone = await runtime.submit("lead", "one");
      const aloneChildren = [`${alone.runId}.c0`, `${alone.runId}.c1`];
      await until(
        () => runtime.list({ parentRunId: alone.runId, status: "running" }),
        (page) => page.runs.length === 2,
      );
      await runtime.cancel(aloneChildren[0] as string);
      await runtime.cancel(aloneChildren[1] as string);
      const aloneResult = await alone.result();
      expect(aloneResult.status).toBe("completed");
      expect(toolResults(aloneResult).map((each) => each.isError)).toEqual([true, true]);
      expect(toolResults(aloneResult)[0]?.content).toContain("run_cancelled");

      const root = await runtime.submit("lead", "two");
      await until(
        () => runtime.list({ parentRunId: root.runId, status: "running" }),
        (page) => page.runs.length === 2,
      );
      await runtime.cancel(root.runId);
      expect((await root.result()).status).toBe("cancelled");
      const statuses = await Promise.all(
        [`${root.runId}.c0`, `${root.runId}.c1`].map(
          async (id) => (await runtime.handle(id).result()).status,
        ),
      );
      expect(statuses).toEqual(["cancelled", "cancelled"]);
    });
  });
}
