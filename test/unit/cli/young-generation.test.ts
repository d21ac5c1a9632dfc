import { describe, expect, it } from "vitest";
import { semiSpaceFlag, wantsRelaunch } from "../../../src/cli/young-generation.js";

describe("semiSpaceFlag", () => {
  it("reads the semi-space a node flag sets, in V8's spellings", () => {
    expect(semiSpaceFlag(["--max-semi-space-size=64"], "")).toBe(64);
    expect(semiSpaceFlag(["--max_semi_space_size=8"], "")).toBe(8);
    expect(semiSpaceFlag(["--max-semi-space-size", "48"], "")).toBe(48);
  });

  it("reads NODE_OPTIONS too, the last one given winning", () => {
    expect(semiSpaceFlag([], "--enable-source-maps --max-semi-space-size=16")).toBe(16);
    expect(semiSpaceFlag(["--max-semi-space-size=64"], "--max-semi-space-size=16")).toBe(16);
  });

  it("is undefined when nothing sets it (other flags are no semi-space)", () => {
    expect(semiSpaceFlag([], "")).toBeUndefined();
    expect(semiSpaceFlag(["--import", "tsx", "--max-old-space-size=4096"], "  ")).toBeUndefined();
    expect(semiSpaceFlag([], "--min-semi-space-size=4")).toBeUndefined();
  });
});

describe("wantsRelaunch", () => {
  it("never on Windows, where a child cannot be stopped gracefully by a passed-on signal", () => {
    expect(wantsRelaunch("win32")).toBe(false);
  });
});
