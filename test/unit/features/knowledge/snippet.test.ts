import { describe, expect, it } from "vitest";
import { makeSnippet } from "../../../../src/features/knowledge/snippet.js";

const words = (count: number, word = "filler") =>
  Array.from({ length: count }, () => word).join(" ");

describe("makeSnippet", () => {
  it("centres on the first match at a word start, cut at spaces and marked", () => {
    const text = `${words(30)} the Rollback button ${words(60)}`;
    const snippet = makeSnippet(text, ["rollback"]);
    expect(snippet.startsWith("…filler")).toBe(true);
    expect(snippet.endsWith("filler…")).toBe(true);
    expect(snippet).toContain("the Rollback button");
    expect(snippet.indexOf("Rollback")).toBeLessThanOrEqual(62);
    expect(snippet.length).toBeLessThanOrEqual(1 + 160 + 60 + 1);
  });

  it("skips occurrences inside a word and picks the earliest term", () => {
    const text = "unrollback noise, then deploy, then rollback";
    expect(makeSnippet(text, ["rollback", "deploy"])).toBe(text);
    expect(makeSnippet(`${words(40)} redeploy deploy`, ["deploy"])).toMatch(/redeploy deploy$/);
  });

  it("falls back to the start without a match and collapses whitespace", () => {
    expect(makeSnippet("Line one\n\n  line two", ["absent"])).toBe("Line one line two");
    expect(makeSnippet("a (b) [c]", ["(b)", ""])).toBe("a (b) [c]");
  });
});
