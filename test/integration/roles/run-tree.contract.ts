// The RunTree role of every backend (child links by parent and by root, the children a parent
// waits for), run on memory, Redis and a Redis Cluster by describeBackendContract.
import { describe, expect, it } from "vitest";
import type { RunLink } from "../../../src/backend.js";
import type { BackendFactory } from "../backend-contract.js";
import { roleHarness } from "./role-harness.js";

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

    it("keeps a parent waiting while any child runs", async () => {
      const backend = await start();
      const first = link("a", "root", "root", 1);
      await backend.linkChild(first);
      await backend.linkChild(link("b", "root", "root", 2));
      expect(await backend.childFinished(first)).toBe(false);
      expect(await backend.childFinished(first)).toBe(false);
      expect(await backend.runningChildren("root")).toEqual(["b"]);
    });
  });
}
