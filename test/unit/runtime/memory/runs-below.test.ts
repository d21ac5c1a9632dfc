import { describe, expect, it } from "vitest";
import { type Below, RunsBelow } from "../../../../src/runtime/memory/runs-below.js";

/** `count` runs `run-0`… set on `below`, every third finished, the rest running. */
function filled(count: number): { below: RunsBelow; expected: [string, Below][] } {
  const below = new RunsBelow();
  const expected: [string, Below][] = [];
  for (let index = 0; index < count; index++) {
    const state: Below = index % 3 === 0 ? "finished" : "running";
    below.set(`run-${index}`, state);
    expected.push([`run-${index}`, state]);
  }
  return { below, expected };
}

describe("RunsBelow", () => {
  it("keeps each run's latest state in the order the runs came, few or many", () => {
    for (const count of [1, 8, 9, 40]) {
      const { below, expected } = filled(count);
      below.set("run-0", "released");
      expected[0] = ["run-0", "released"];
      expect(below.entries()).toEqual(expected);
      expect(below.size).toBe(count);
      expect(below.get("run-0")).toBe("released");
      expect(below.has(`run-${count - 1}`)).toBe(true);
      expect(below.get("unknown")).toBeUndefined();
      expect(below.has("unknown")).toBe(false);
    }
  });

  it("deletes a run, keeping the others in order; deleting an unknown run changes nothing", () => {
    for (const count of [3, 8, 12]) {
      const { below, expected } = filled(count);
      expect(below.delete("run-1")).toBe(true);
      expect(below.delete("run-1")).toBe(false);
      expect(below.delete("unknown")).toBe(false);
      expect(below.entries()).toEqual(expected.filter(([runId]) => runId !== "run-1"));
      expect(below.size).toBe(count - 1);
      expect(below.get("run-1")).toBeUndefined();
    }
  });

  it("gives a copy of its entries: changing the runs while walking them leaves the walk as it was", () => {
    for (const count of [2, 10]) {
      const { below, expected } = filled(count);
      const walked: string[] = [];
      for (const [runId] of below.entries()) {
        walked.push(runId);
        below.delete(runId);
        below.set(`${runId}-again`, "running");
      }
      expect(walked).toEqual(expected.map(([runId]) => runId));
      expect(below.entries()).toEqual(expected.map(([runId]) => [`${runId}-again`, "running"]));
    }
  });
});
