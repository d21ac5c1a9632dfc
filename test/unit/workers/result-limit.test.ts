import { describe, expect, it } from "vitest";
import { capToolResult } from "../../../src/workers/result-limit.js";

const result = (content: string) => ({ toolCallId: "c1", content, isError: false });

describe("capToolResult", () => {
  it("returns a result within the limit as it is", () => {
    const small = result("é".repeat(500));
    expect(capToolResult(small, 1000)).toBe(small);
  });

  it("cuts between characters at every offset, within the limit, with a note", () => {
    const content = "a€🔧\uD800é".repeat(300);
    for (let maxBytes = 256; maxBytes < 300; maxBytes++) {
      const cut = capToolResult(result(content), maxBytes);
      expect(Buffer.byteLength(cut.content)).toBeLessThanOrEqual(maxBytes);
      const [kept = "", note = ""] = cut.content.split("\n[harnessx: ");
      expect(content.startsWith(kept)).toBe(true);
      // Never half a surrogate pair: the kept part ends on a whole character.
      expect(kept.endsWith("\uD83D")).toBe(false);
      expect(note).toMatch(
        /^this tool result was cut: it was \d+ bytes, over the limit of \d+ bytes/,
      );
      expect(JSON.parse(JSON.stringify(cut))).toEqual(cut);
      expect(cut.toolCallId).toBe("c1");
    }
  });
});
