import { describe, expect, it } from "vitest";
import type { RunLink } from "../../../../src/backend.js";
import { MemoryRunTree } from "../../../../src/runtime/memory/run-tree.js";

const link = (index: number, parentRunId = "parent"): RunLink => ({
  runId: `${parentRunId}.child-${index}`,
  agent: "researcher",
  parentRunId,
  parentToolCallId: `call_${index}`,
  parentIteration: 1,
  rootRunId: "parent",
  depth: parentRunId === "parent" ? 1 : 2,
  createdAt: index,
});

/** A tree whose runs are all stored, every token fencing, no outcome committed. */
const tree = () =>
  new MemoryRunTree({ fences: () => true, commit: async () => true, stored: () => true });

describe("MemoryRunTree", () => {
  // Few runs below a parent are kept as pairs, more in a Map: the same answers either way.
  for (const count of [1, 8, 12]) {
    it(`counts ${count} children down to the last, and lists them oldest first`, async () => {
      const runs = tree();
      const links = Array.from({ length: count }, (_, index) => link(count - index));
      await runs.waitForChildren("parent", 1, links);
      const ids = links.map((each) => each.runId);
      expect((await runs.childrenOf("parent")).map((each) => each.runId)).toEqual(
        [...ids].reverse(),
      );
      expect(await runs.runningChildren("parent")).toEqual(ids);
      const finished = [];
      for (const each of links) finished.push(await runs.childFinished(each));
      expect(finished).toEqual([...Array(count - 1).fill(false), true]);
      expect(await runs.runningChildren("parent")).toEqual([]);
      // Linking a finished child again does not count it again.
      expect(await runs.linkChild(links[0] as RunLink)).toBe(false);
      expect(await runs.runningChildren("parent")).toEqual([]);
    });
  }

  it("keeps a root's descendants past the pairs, and forgets a child with its place", async () => {
    const runs = tree();
    await runs.linkChild(link(1));
    const deeper = Array.from({ length: 11 }, (_, index) => link(index + 2, "parent.child-1"));
    for (const each of deeper) await runs.linkChild(each);
    expect(await runs.descendantsOf("parent")).toHaveLength(12);
    expect(await runs.runningChildren("parent.child-1")).toHaveLength(11);
    runs.forget("parent.child-1.child-5");
    expect(await runs.linkOf("parent.child-1.child-5")).toBeUndefined();
    expect((await runs.descendantsOf("parent")).map((each) => each.runId)).not.toContain(
      "parent.child-1.child-5",
    );
    expect(await runs.runningChildren("parent.child-1")).toHaveLength(10);
    expect(await runs.childFinished(link(5, "parent.child-1"))).toBe(false);
  });
});
