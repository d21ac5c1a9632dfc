// The RunTree role of every backend (child links by parent and by root, the children a parent
// waits for), run on memory, Redis and a Redis Cluster by describeBackendContract.
import { describe, expect, it } from "vitest";
import type { RunBackend, RunLink } from "../../../src/backend.js";
import type { RunRecord } from "../../../src/index.js";
import { LeaseLostError } from "../../../src/store/errors.js";
import type { BackendFactory } from "../backend-contract.js";
import { record, roleHarness } from "./role-harness.js";

const link = (
  runId: string,
  parentRunId: string,
  rootRunId: string,
  createdAt: number,
): RunLink => ({
  runId,
  agent: "researcher",
  parentRunId,
  parentToolCallId: `call_${runId}`,
  parentIteration: 1,
  rootRunId,
  depth: parentRunId === rootRunId ? 1 : 2,
  createdAt,
});

/** A stored parent run and its lease token, as the step entering dispatch holds it. */
async function leasedParent(backend: RunBackend, runId: string): Promise<number> {
  await backend.createRun(record(runId, "running", 1));
  const lease = await backend.acquireLease(runId);
  if (!lease.acquired) throw new Error("expected the lease");
  return lease.token;
}

/** The record of the run `each` links, as its start stores it. */
const child = (each: RunLink): RunRecord => ({
  ...record(each.runId, "queued", each.createdAt),
  agent: each.agent,
  parentRunId: each.parentRunId,
  parentToolCallId: each.parentToolCallId,
  rootRunId: each.rootRunId,
});

const sorted = async (ids: Promise<string[]>) => (await ids).sort();

export function describeRunTreeContract(name: string, factory: BackendFactory): void {
  describe(`RunTree of ${name}`, () => {
    const { start } = roleHarness(factory);

    it("links children under their parent and their root, once", async () => {
      const backend = await start();
      expect(await backend.linkChild(link("a", "root", "root", 1))).toBe(true);
      expect(await backend.linkChild(link("b", "root", "root", 2))).toBe(true);
      expect(await backend.linkChild(link("a1", "a", "root", 3))).toBe(true);
      // A job delivered again links nothing twice.
      expect(await backend.linkChild({ ...link("a", "root", "root", 9), agent: "other" })).toBe(
        false,
      );
      expect((await backend.childrenOf("root")).map((each) => each.runId)).toEqual(["a", "b"]);
      expect((await backend.childrenOf("a")).map((each) => each.runId)).toEqual(["a1"]);
      expect((await backend.descendantsOf("root")).map((each) => each.runId)).toEqual([
        "a",
        "b",
        "a1",
      ]);
      expect(await backend.linkOf("a")).toEqual(link("a", "root", "root", 1));
      expect(await backend.linkOf("root")).toBeUndefined();
      expect(await backend.childrenOf("nobody")).toEqual([]);
    });

    it("gives a run's link beside the record its finishing save wrote, as it gives it without", async () => {
      const backend = await start();
      const child = link("a", "root", "root", 1);
      await backend.linkChild(child);
      for (const runId of ["a", "root"]) {
        const token = await leasedParent(backend, runId);
        const finished = record(runId, "completed", 1);
        await backend.saveRun(runId, token, finished, { release: true });
        const expected = runId === "a" ? child : undefined;
        expect(await backend.linkOf(runId, finished)).toEqual(expected);
        expect(await backend.linkOf(runId)).toEqual(expected);
        // Another run's record tells nothing of this one's link.
        expect(await backend.linkOf(runId === "a" ? "root" : "a", finished)).toEqual(
          runId === "a" ? undefined : child,
        );
      }
    });

    it("tells the last child to finish, and only it, to wake the parent", async () => {
      const backend = await start();
      const first = link("a", "root", "root", 1);
      const second = link("b", "root", "root", 2);
      await backend.linkChild(first);
      await backend.linkChild(second);
      expect((await backend.runningChildren("root")).sort()).toEqual(["a", "b"]);
      const both = await Promise.all([backend.childFinished(first), backend.childFinished(second)]);
      expect(both.filter(Boolean)).toHaveLength(1);
      expect(await backend.runningChildren("root")).toEqual([]);
      // Asked again after a crash, the last one still wakes the parent.
      expect(await backend.childFinished(second)).toBe(true);
    });

    it("commits a finished child's outcome to its parent's call with the count, once", async () => {
      const backend = await start();
      await backend.createRun(record("root", "waiting", 1));
      const first = link("a", "root", "root", 1);
      const second = link("b", "root", "root", 2);
      await backend.linkChild(first);
      await backend.linkChild(second);
      const outcome = (child: RunLink, content: string) => ({
        result: { toolCallId: child.parentToolCallId, content, isError: false },
        events: [
          {
            type: "child_finished" as const,
            childRunId: child.runId,
            agent: child.agent,
            toolCallId: child.parentToolCallId,
            status: "completed" as const,
          },
        ],
      });
      expect(await backend.childFinished(first, outcome(first, "notes a"))).toBe(false);
      // Delivered again with another answer: the first write stays, the count does not move.
      expect(await backend.childFinished(first, outcome(first, "again"))).toBe(false);
      expect(await backend.runningChildren("root")).toEqual(["b"]);
      expect(await backend.childFinished(second, outcome(second, "notes b"))).toBe(true);
      expect(await backend.rawResults("root", 1)).toEqual({
        call_a: { toolCallId: "call_a", content: "notes a", isError: false },
        call_b: { toolCallId: "call_b", content: "notes b", isError: false },
      });
      const { events } = await backend.readEvents("root", 0, 10);
      expect(
        events.flatMap((event) => (event.type === "child_finished" ? [event.childRunId] : [])),
      ).toEqual(["a", "a", "b"]);
    });

    it("keeps a parent waiting while any child runs", async () => {
      const backend = await start();
      const first = link("a", "root", "root", 1);
      await backend.linkChild(first);
      await backend.linkChild(link("b", "root", "root", 2));
      expect(await backend.childFinished(first)).toBe(false);
      expect(await backend.childFinished(first)).toBe(false);
      expect(await backend.runningChildren("root")).toEqual(["b"]);
    });

    it("records a turn's children before any starts: only the last to finish wakes the parent", async () => {
      const backend = await start();
      const token = await leasedParent(backend, "root");
      const [a, b, c] = ["a", "b", "c"].map((id, at) => link(id, "root", "root", at + 1)) as [
        RunLink,
        RunLink,
        RunLink,
      ];
      await backend.waitForChildren("root", token, [a, b, c]);
      expect(await sorted(backend.runningChildren("root"))).toEqual(["a", "b", "c"]);
      expect((await backend.childrenOf("root")).map((each) => each.runId)).toEqual(["a", "b", "c"]);
      expect(await backend.linkOf("b")).toEqual(b);
      // Two finish before the third's tool job has even linked it: neither is the last.
      expect(await backend.childFinished(a)).toBe(false);
      expect(await backend.childFinished(b)).toBe(false);
      // A late tool job of a finished child links it again: it stays finished.
      expect(await backend.linkChild(a)).toBe(false);
      expect(await backend.linkChild(c)).toBe(false);
      expect(await backend.runningChildren("root")).toEqual(["c"]);
      expect(await backend.childFinished(c)).toBe(true);
      expect(await backend.runningChildren("root")).toEqual([]);
    });

    it("records a turn's children before a write of the parent issued behind, unawaited", async () => {
      const backend = await start();
      const token = await leasedParent(backend, "root");
      const [a, b] = ["a", "b"].map((id, at) => link(id, "root", "root", at + 1)) as [
        RunLink,
        RunLink,
      ];
      const result = { toolCallId: a.parentToolCallId, content: "notes a", isError: false };
      // The step sends its dispatch save right behind the children, without waiting for them.
      const recorded = backend.waitForChildren("root", token, [a, b]);
      const finished = backend.childFinished(a, { result });
      await recorded;
      // Applied after them: "a" was counted, then finished; "b" still runs.
      expect(await finished).toBe(false);
      expect(await backend.runningChildren("root")).toEqual(["b"]);
      expect(await backend.childFinished(b)).toBe(true);
    });

    it("refuses a turn's children under a lease that was taken over, and records none", async () => {
      const backend = await start();
      const stale = await leasedParent(backend, "root");
      await backend.releaseLease("root", stale);
      const current = await backend.acquireLease("root");
      expect(current.acquired).toBe(true);
      await expect(
        backend.waitForChildren("root", stale, [link("a", "root", "root", 1)]),
      ).rejects.toBeInstanceOf(LeaseLostError);
      expect(await backend.childrenOf("root")).toEqual([]);
      expect(await backend.runningChildren("root")).toEqual([]);
    });

    it("waits for exactly the new turn's children: a turn cut short by a crash is dropped", async () => {
      const backend = await start();
      const token = await leasedParent(backend, "root");
      const lost = link("lost", "root", "root", 1);
      const kept = link("kept", "root", "root", 2);
      await backend.waitForChildren("root", token, [lost]);
      // The step ran again and its model answered with another call.
      await backend.waitForChildren("root", token, [kept]);
      expect(await backend.runningChildren("root")).toEqual(["kept"]);
      expect(await backend.childFinished(lost)).toBe(false);
      expect(await backend.childFinished(kept)).toBe(true);
    });

    it("drops the children a turn cut short recorded and never started: links and places", async () => {
      const backend = await start();
      // A parent below the root, so that its children have places under the root too.
      await backend.linkChild(link("mid", "root", "root", 1));
      const token = await leasedParent(backend, "mid");
      const lost = link("lost", "mid", "root", 2);
      const ran = link("ran", "mid", "root", 3);
      const kept = link("kept", "mid", "root", 4);
      await backend.waitForChildren("mid", token, [lost, ran]);
      // One of them stored (a start the cut-short turn cannot make, but a stored run keeps its
      // place whatever its call came to).
      expect(await backend.createRun(child(ran))).toBe(true);
      // The step ran again and its model answered with another call.
      await backend.waitForChildren("mid", token, [kept]);

      expect(await backend.runningChildren("mid")).toEqual(["kept"]);
      expect(await backend.linkOf("lost")).toBeUndefined();
      expect((await backend.childrenOf("mid")).map((each) => each.runId)).toEqual(["ran", "kept"]);
      expect((await backend.descendantsOf("root")).map((each) => each.runId)).toEqual([
        "mid",
        "ran",
        "kept",
      ]);
      const keys = (await factory.storedKeys?.()) ?? [];
      expect(keys.filter((key) => key.includes("lost"))).toEqual([]);
      // A late start of the dropped child stores nothing: its link is gone.
      expect(await backend.createRun(child(lost))).toBe(false);
      expect(await backend.childFinished(kept)).toBe(true);
    });

    it("keeps every child apart, whatever its call id, and its parent's record beside them", async () => {
      const backend = await start();
      const token = await leasedParent(backend, "p");
      // Children named by the parent's id and odd call ids (what Redis's UTF-8 cannot hold,
      // or what starts as a tree field does), one named otherwise, and a grandchild. (Not both
      // "\uD800" and "\uFFFD": Redis keys, a link's among them, hold the two as one.)
      const calls = ["", ":", "工具-🔧-é", "\uD800", "\u0000x", ">", "=y", "<", "record"];
      const children = [
        ...calls.map((call, at) => link(`p.${call}`, "p", "p", at + 1)),
        link("q", "p", "p", 20),
      ];
      const grandchild = link("p.:.z", "p.:", "p", 30);
      const ids = children.map((each) => each.runId);
      await backend.waitForChildren("p", token, children);
      expect(await backend.linkChild(grandchild)).toBe(true);
      expect((await backend.childrenOf("p")).map((each) => each.runId)).toEqual(ids);
      expect((await backend.descendantsOf("p")).map((each) => each.runId)).toEqual([
        ...ids,
        grandchild.runId,
      ]);
      expect((await backend.childrenOf("p.:")).map((each) => each.runId)).toEqual(["p.:.z"]);
      expect(await sorted(backend.runningChildren("p"))).toEqual([...ids].sort());
      expect((await backend.loadRun("p"))?.status).toBe("running");
      // Each finishes once; only the last wakes the parent.
      const [last, ...others] = [...children].reverse() as [RunLink, ...RunLink[]];
      await backend.releaseChild(others[0] as RunLink);
      for (const each of others.slice(1)) expect(await backend.childFinished(each)).toBe(false);
      expect(await backend.runningChildren("p")).toEqual([last.runId]);
      expect(await backend.childFinished(last)).toBe(true);
      expect(await backend.runningChildren("p")).toEqual([]);
      // The released child left the parent's children; the others stay listed, finished.
      expect((await backend.childrenOf("p")).map((each) => each.runId)).toEqual(
        ids.filter((id) => id !== others[0]?.runId),
      );
    });

    it("releases a child whose call starts none, and counts it again once it starts", async () => {
      const backend = await start();
      const token = await leasedParent(backend, "root");
      const asked = link("asked", "root", "root", 1);
      const other = link("other", "root", "root", 2);
      await backend.waitForChildren("root", token, [asked, other]);
      await backend.releaseChild(asked);
      expect(await backend.runningChildren("root")).toEqual(["other"]);
      // Approved later: its tool job links it again (its link went with the release: no run).
      expect(await backend.linkChild(asked)).toBe(true);
      expect(await sorted(backend.runningChildren("root"))).toEqual(["asked", "other"]);
      expect(await backend.childFinished(other)).toBe(false);
      expect(await backend.childFinished(asked)).toBe(true);
      // Released once none runs: nothing left to count.
      await backend.releaseChild(asked);
      expect(await backend.runningChildren("root")).toEqual([]);
    });

    it("drops a released child's link unless its run is stored, and stores no run of it unlinked", async () => {
      const backend = await start();
      const mid = link("mid", "root", "root", 1);
      const denied = link("denied", "mid", "root", 2);
      const started = link("started", "mid", "root", 3);
      for (const each of [mid, denied, started]) await backend.linkChild(each);
      expect(await backend.createRun(child(started))).toBe(true);
      await backend.releaseChild(denied);
      await backend.releaseChild(started);

      // Neither counts under its parent any more. The stored child keeps its link and its
      // places, under its parent and its root; the other leaves the tree, link and places.
      expect(await backend.runningChildren("mid")).toEqual([]);
      expect((await backend.childrenOf("mid")).map((each) => each.runId)).toEqual(["started"]);
      expect(await backend.linkOf("denied")).toBeUndefined();
      expect(await backend.linkOf("started")).toEqual(started);
      expect((await backend.descendantsOf("root")).map((each) => each.runId)).toEqual([
        "mid",
        "started",
      ]);
      const keys = (await factory.storedKeys?.()) ?? [];
      expect(keys.filter((key) => key.includes("denied"))).toEqual([]);
      // A start that linked it before the release stores nothing after it...
      expect(await backend.createRun(child(denied))).toBe(false);
      expect(await backend.submitRuns([child(denied)])).toEqual(["denied"]);
      expect(await backend.loadRun("denied")).toBeUndefined();
      // ...until a start links it again (an approval's).
      expect(await backend.linkChild(denied)).toBe(true);
      expect(await backend.submitRun(child(denied))).toBe(true);
      expect(await sorted(backend.runningChildren("mid"))).toEqual(["denied"]);
    });

    it("lists a released child whose run is stored under its parent as under its root, at any depth", async () => {
      const backend = await start();
      const token = await leasedParent(backend, "root");
      const released = link("released", "root", "root", 1);
      const other = link("other", "root", "root", 2);
      await backend.waitForChildren("root", token, [released, other]);
      expect(await backend.createRun(child(released))).toBe(true);
      await backend.releaseChild(released);

      // It no longer counts: the other child's finish is the last.
      expect(await backend.runningChildren("root")).toEqual(["other"]);
      for (const read of [backend.childrenOf("root"), backend.descendantsOf("root")]) {
        expect((await read).map((each) => each.runId)).toEqual(["released", "other"]);
      }
      // Its finish (the run goes on) wakes nothing while the other runs.
      expect(await backend.childFinished(released)).toBe(false);
      // Linked again (its call approved later), it counts again, and is the last.
      expect(await backend.linkChild(released)).toBe(false);
      expect(await sorted(backend.runningChildren("root"))).toEqual(["other", "released"]);
      expect(await backend.childFinished(other)).toBe(false);
      expect(await backend.childFinished(released)).toBe(true);
      expect((await backend.childrenOf("root")).map((each) => each.runId)).toEqual([
        "released",
        "other",
      ]);
    });
  });
}
