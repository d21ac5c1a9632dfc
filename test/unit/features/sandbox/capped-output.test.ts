import { describe, expect, it } from "vitest";
import { CappedOutput } from "../../../../src/features/sandbox/capped-output.js";

const collect = (limit: number, ...chunks: string[]) => {
  const output = new CappedOutput(limit);
  for (const chunk of chunks) output.push(Buffer.from(chunk));
  return output.text();
};

describe("CappedOutput", () => {
  it("keeps output up to the limit whole and unmarked", () => {
    expect(collect(10, "hello", "world")).toBe("helloworld");
    expect(collect(10)).toBe("");
  });

  it("cuts across chunks at the limit and marks the cut", () => {
    expect(collect(7, "hello", "world", "!")).toBe("hellowo\n[output truncated at 7 bytes]");
  });

  it.each([
    ["a two-byte character", "é", 2, "a"],
    ["a three-byte character", "€", 2, "a"],
    ["a four-byte character", "😀", 4, "a"],
  ])("never splits %s", (_name, character, limit, kept) => {
    expect(collect(limit, `a${character}${character}`)).toBe(
      `${kept}\n[output truncated at ${limit} bytes]`,
    );
  });

  it("keeps a character that ends exactly at the limit", () => {
    expect(collect(3, "aé", "b")).toBe("aé\n[output truncated at 3 bytes]");
  });
});
