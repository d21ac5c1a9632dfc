import { describe, expect, it } from "vitest";
import { inChunks } from "../../../src/runtime/redis-submit.js";

describe("inChunks", () => {
  it("works on each chunk, a few at a time, and gives the results in the chunks' order", async () => {
    let running = 0;
    let most = 0;
    const results = await inChunks([1, 2, 3, 4, 5, 6, 7], 2, 2, async (chunk) => {
      running += 1;
      most = Math.max(most, running);
      // Later chunks finish first: the order of the results is still the chunks'.
      await new Promise((resolve) => setTimeout(resolve, 20 - (chunk[0] ?? 0)));
      running -= 1;
      return chunk.join("+");
    });

    expect(results).toEqual(["1+2", "3+4", "5+6", "7"]);
    expect(most).toBe(2);
    expect(await inChunks([], 500, 4, async () => "never")).toEqual([]);
  });

  it("rejects with the first failure and starts no chunk after it", async () => {
    const started: number[] = [];
    const outcome = inChunks([1, 2, 3, 4, 5, 6], 1, 2, async ([item]) => {
      started.push(item as number);
      if (item === 2) throw new Error("chunk 2 failed");
      await new Promise((resolve) => setTimeout(resolve, 10));
      return item;
    });

    await expect(outcome).rejects.toThrow("chunk 2 failed");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started).toEqual([1, 2]);
  });
});
