// A run tree's keys (SPEC §14), on memory, Redis and a Redis Cluster (run by
// describeBackendContract): they go with their runs (prune, delete and deleteSession remove a
// run's link and its places below its parent and its root), and a waiting parent keeps no
// start mark for the call whose child it waits for.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunBackend, RunLink } from "../../src/backend.js";
import {
  Agent,
  type AgentRuntime,
  PermissionManager,
  type Provider,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { storedRun } from "../support/run-records.js";
import type { BackendFactory } from "./backend-contract.js";
import { Runtimes, silent } from "./fixtures.js";
import { roleHarness } from "./roles/role-harness.js";

const ROOT = "tree-root";
const link = (runId: string, parentRunId: string, createdAt: number): RunLink => ({
  runId,
  agent: "researcher",
  parentRunId,
  parentToolCallId: `call-${runId}`,
  parentIteration: 1,
  rootRunId: ROOT,
  depth: parentRunId === ROOT ? 1 : 2,
  createdAt,
});

/** The ids the tree of `runId` reads: its children, and below it when it is a root. */
async function treeReads(backend: RunBackend, runId: string) {
  const ids = (links: RunLink[]) => links.map((each) => each.runId);
  return {
    children: ids(await backend.childrenOf(runId)),
    descendants: ids(await backend.descendantsOf(runId)),
    running: await backend.runningChildren(runId),
  };
}

/**
 * A model whose first turn calls `tool` once per input, and whose turn after tool results
 * answers "done": by turn, as several runs share it.
 */
const callsThen = (tool: string, inputs: readonly string[]): Provider => ({
  name: "calls-then",
  async complete(request) {
    if (request.messages.at(-1)?.role === "tool") return textResponse("done");
    return toolCallResponse(
      inputs.map((input, index) => ({ name: tool, input: { input }, id: `c${index}` })),
    );
  },
});

const agent = (name: string, options: ConstructorParameters<typeof Agent>[0] = {}) =>
  new Agent({ ...options, config: { name, ...options.config }, logger: silent });

/** lead → 2 × middle → 1 × leaf each: a tree of five runs. */
const threeLevels = () => {
  const leaf = agent("leaf", {
    provider: new ScriptedProvider([textResponse("leaf notes")], { loop: true }),
  });
  const middle = agent("middle", {
    provider: callsThen("leaf", ["deeper"]),
    tools: [leaf.asTool({ description: "Leaf" })],
  });
  const lead = agent("lead", {
    provider: callsThen("middle", ["one", "two"]),
    tools: [middle.asTool({ description: "Middle" })],
  });
  return [lead, middle, leaf];
};

const listedIds = async (runtime: AgentRuntime, options: Parameters<AgentRuntime["list"]>[0]) =>
  (await runtime.list(options)).runs.map((each) => each.runId).sort();

export function describeTreeKeysContract(name: string, factory: BackendFactory): void {
  /** The stored keys naming a run of `ids` or the tree, as far as the storage lists keys. */
  const keysOf = async (ids: readonly string[]): Promise<string[]> => {
    const keys = (await factory.storedKeys?.()) ?? [];
    return keys.filter((key) => key.includes(":tree:") || ids.some((id) => key.includes(id)));
  };

  describe(`a run tree's keys on ${name}`, () => {
    const { start } = roleHarness(factory);

    it("go with its runs, whichever goes first: deleted, then pruned", async () => {
      const backend = await start();
      const children = [link(`${ROOT}.a`, ROOT, 2), link(`${ROOT}.b`, ROOT, 3)];
      const grandchild = link(`${ROOT}.a.x`, `${ROOT}.a`, 4);
      const runIds = [ROOT, ...[...children, grandchild].map((each) => each.runId)];
      for (const [at, runId] of runIds.entries()) {
        await backend.createRun(storedRun(runId, { createdAt: at + 1, status: "completed" }));
      }
      for (const each of [...children, grandchild])
        expect(await backend.linkChild(each)).toBe(true);
      for (const each of [grandchild, ...children]) await backend.childFinished(each);

      // The root goes first: the runs below it still list under it.
      expect(await backend.deleteRun(ROOT)).toBe("deleted");
      expect(await treeReads(backend, ROOT)).toEqual({
        children: [`${ROOT}.a`, `${ROOT}.b`],
        descendants: [`${ROOT}.a`, `${ROOT}.b`, `${ROOT}.a.x`],
        running: [],
      });
      // A child goes: from its parent's children and its root's runs, with its link.
      expect(await backend.deleteRun(`${ROOT}.b`)).toBe("deleted");
      expect(await backend.linkOf(`${ROOT}.b`)).toBeUndefined();
      expect(await treeReads(backend, ROOT)).toEqual({
        children: [`${ROOT}.a`],
        descendants: [`${ROOT}.a`, `${ROOT}.a.x`],
        running: [],
      });
      // Pruned, the rest goes: nothing of the tree is left.
      expect(await backend.pruneRuns(100)).toEqual({ deleted: 2, unreadable: 0 });
      for (const runId of runIds) {
        expect(await backend.linkOf(runId)).toBeUndefined();
        expect(await treeReads(backend, runId)).toEqual({
          children: [],
          descendants: [],
          running: [],
        });
      }
      expect(await keysOf(runIds)).toEqual([]);
    });

    it("go with a parent whose turns a crash cut short, and the children they never started", async () => {
      const backend = await start();
      const started = link(`${ROOT}.a`, ROOT, 2);
      const lost = link(`${ROOT}.b`, ROOT, 3);
      const lostBelow = link(`${ROOT}.a.x`, `${ROOT}.a`, 4);
      // Each parent's step recorded its turn's children, then died before its dispatch save;
      // run again, its model answered without calling them, and it finished.
      for (const [parent, children] of [
        [ROOT, [started, lost]],
        [started.runId, [lostBelow]],
      ] as const) {
        await backend.createRun(storedRun(parent, { createdAt: 1, status: "running" }));
        const lease = await backend.acquireLease(parent);
        if (!lease.acquired) throw new Error("expected the lease");
        await backend.waitForChildren(parent, lease.token, children);
        const finished = storedRun(parent, { createdAt: 1, status: "completed" });
        await backend.saveRun(parent, lease.token, finished, { release: true });
      }

      expect(await backend.deleteRun(ROOT)).toBe("deleted");
      expect(await backend.linkOf(lost.runId)).toBeUndefined();
      expect((await backend.childrenOf(ROOT)).map((each) => each.runId)).toEqual([started.runId]);
      expect(await backend.deleteRun(started.runId)).toBe("deleted");
      for (const each of [ROOT, started.runId, lost.runId, lostBelow.runId]) {
        expect(await backend.linkOf(each)).toBeUndefined();
        expect(await treeReads(backend, each)).toEqual({
          children: [],
          descendants: [],
          running: [],
        });
      }
      expect(await keysOf([ROOT])).toEqual([]);
    });

    const { editStored } = factory;
    if (editStored !== undefined)
      it("uncount a running child deleted unreadable, and keep the parent's other children", async () => {
        const backend = await start();
        const gone = link(`${ROOT}.a`, ROOT, 2);
        const kept = link(`${ROOT}.b`, ROOT, 3);
        await backend.createRun(storedRun(ROOT, { createdAt: 1, status: "running" }));
        await backend.createRun(storedRun(gone.runId, { createdAt: 2, status: "running" }));
        await backend.createRun(storedRun(kept.runId, { createdAt: 3, status: "running" }));
        await backend.linkChild(gone);
        await backend.linkChild(kept);
        // Deleting takes a running run only when it cannot be read.
        await editStored(gone.runId, "record", () => "{not json");
        expect(await backend.deleteRun(gone.runId)).toBe("deleted");
        expect(await treeReads(backend, ROOT)).toEqual({
          children: [kept.runId],
          descendants: [kept.runId],
          running: [kept.runId],
        });
        // The one child left running is the last: its finish wakes the parent.
        expect(await backend.childFinished(kept)).toBe(true);
        const left = (await factory.storedKeys?.()) ?? [];
        expect(left.filter((key) => key.includes(gone.runId))).toEqual([]);
      });
  });

  describe(`a finished run tree's runs on ${name}`, () => {
    const runtimes = new Runtimes();
    afterEach(async () => {
      await runtimes.closeAll();
      await factory.cleanup();
    });

    const finishedTree = async () => {
      const backend = factory.create();
      const runtime = await runtimes.start(threeLevels(), backend);
      const handle = await runtime.submit("lead", "go");
      expect((await handle.result()).status).toBe("completed");
      const rootRunId = handle.runId;
      const middles = [`${rootRunId}.c0`, `${rootRunId}.c1`];
      const leaves = middles.map((middle) => `${middle}.c0`);
      const runIds = [rootRunId, ...middles, ...leaves].sort();
      expect(await listedIds(runtime, { rootRunId })).toEqual(runIds);
      return { runtime, backend, rootRunId, middles, leaves, runIds };
    };

    it("leave the tree's lists as they are deleted, then pruned", async () => {
      const { runtime, rootRunId, middles, leaves, runIds } = await finishedTree();
      const [middle = "", other = ""] = middles;
      await runtime.delete(leaves[0] as string);
      expect(await listedIds(runtime, { parentRunId: middle })).toEqual([]);
      expect(await listedIds(runtime, { rootRunId })).toEqual(
        runIds.filter((runId) => runId !== leaves[0]),
      );
      expect((await runtime.get(middle)).children).toBeUndefined();

      const pruned = await runtime.prune({ finishedBefore: Date.now() + 1000 });
      expect(pruned).toEqual({ deleted: 4, unreadable: 0 });
      expect(await listedIds(runtime, { rootRunId })).toEqual([]);
      expect(await listedIds(runtime, { parentRunId: other })).toEqual([]);
      expect(await keysOf(runIds).then(runStoreKeys)).toEqual([]);
    });

    it("list only the children that exist, and leave no key of a turn cut short as they go", async () => {
      const { runtime, backend, rootRunId, middles, runIds } = await finishedTree();
      // A turn of the root's that a crash cut short recorded a child it never started.
      const lease = await backend.acquireLease(rootRunId);
      if (!lease.acquired) throw new Error("expected the lease");
      const lost = { ...link(`${rootRunId}.c9`, rootRunId, 9), rootRunId, agent: "middle" };
      await backend.waitForChildren(rootRunId, lease.token, [lost]);
      await backend.releaseLease(rootRunId, lease.token);

      const detail = await runtime.get(rootRunId);
      expect(detail.children?.map((each) => each.runId)).toEqual(middles);
      expect(await listedIds(runtime, { parentRunId: rootRunId })).toEqual(middles);
      expect(await listedIds(runtime, { rootRunId })).toEqual(runIds);

      const pruned = await runtime.prune({ finishedBefore: Date.now() + 1000 });
      expect(pruned).toEqual({ deleted: 5, unreadable: 0 });
      expect(await backend.linkOf(lost.runId)).toBeUndefined();
      expect(await keysOf([...runIds, lost.runId]).then(runStoreKeys)).toEqual([]);
    });

    it("hold a released child that ran under its parent: a cancel of the parent reaches it", async () => {
      const backend = factory.create();
      const runtime = await runtimes.start(threeLevels(), backend, { workers: false });
      const child = { ...link(`${ROOT}.a`, ROOT, 2), agent: "middle" };
      await backend.createRun(storedRun(ROOT, { createdAt: 1, status: "waiting", agent: "lead" }));
      await backend.linkChild(child);
      await backend.createRun({
        ...storedRun(child.runId, { createdAt: 2, status: "running", agent: "middle" }),
        parentRunId: ROOT,
        parentToolCallId: child.parentToolCallId,
        rootRunId: ROOT,
      });
      // Its call gave up (say), yet its run was stored: it runs on, counted by nobody.
      await backend.releaseChild(child);
      expect(await backend.runningChildren(ROOT)).toEqual([]);

      expect((await runtime.get(ROOT)).children?.map((each) => each.runId)).toEqual([child.runId]);
      expect(await listedIds(runtime, { parentRunId: ROOT })).toEqual([child.runId]);
      expect(await listedIds(runtime, { rootRunId: ROOT })).toEqual([ROOT, child.runId]);
      await runtime.cancel(ROOT);
      expect(await backend.cancelRequested(child.runId)).toBe(true);
    });

    it("leave the tree's lists as their session is deleted", async () => {
      const { runtime, rootRunId, runIds } = await finishedTree();
      const { sessionId } = await runtime.get(rootRunId);
      expect(await runtime.deleteSession(sessionId)).toMatchObject({ runs: 5 });
      expect(await listedIds(runtime, { rootRunId })).toEqual([]);
      expect(await keysOf(runIds).then(runStoreKeys)).toEqual([]);
    });

    it("keep no start mark on a waiting parent's call: its child's id makes a second start harmless", async () => {
      const asking = agent("asking", {
        provider: callsThen("ask", ["x"]),
        tools: [
          tool({
            name: "ask",
            description: "Asks a person first",
            input: z.object({ input: z.string() }),
            handler: () => "ok",
          }),
        ],
        permissions: new PermissionManager({ rules: [{ tool: "ask", decision: "ask" }] }),
      });
      const parent = agent("parent", {
        provider: callsThen("asking", ["y"]),
        tools: [asking.asTool({ description: "Asks" })],
      });
      const backend = factory.create();
      const runtime = await runtimes.start([parent, asking], backend);
      const handle = await runtime.submit("parent", "go");
      // Its child parks: the parent waits for it.
      for (let tries = 0; tries < 200; tries += 1) {
        const page = await runtime.list({ parentRunId: handle.runId, status: "awaiting_approval" });
        if (page.runs.length === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(await listedIds(runtime, { parentRunId: handle.runId })).toEqual([
        `${handle.runId}.c0`,
      ]);
      expect((await runtime.get(`${handle.runId}.c0`)).status).toBe("awaiting_approval");
      // The first start mark of the parent's call is the one taken now: none was kept before.
      const opened = await backend.openToolCall(handle.runId, 1, "c0", "c0");
      expect(opened.started).toBe(true);
      expect(opened.committed).toBe(false);
    });
  });
}

/**
 * The keys of the run store among `keys`: all but BullMQ's (`<prefix>:harnessx-…`), whose
 * finished jobs its queues keep as they are told (`keepCompletedJobs`), whatever the runs.
 */
const runStoreKeys = (keys: string[]): string[] =>
  keys.filter((key) => !/:harnessx-[a-z]+:/.test(key));
