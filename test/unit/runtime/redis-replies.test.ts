import { describe, expect, it } from "vitest";
import {
  parseLeaseReply,
  parseOpenToolCallReply,
  parseSaveReply,
} from "../../../src/runtime/redis/replies.js";
import { BackendError } from "../../../src/store/errors.js";

describe("the runtime's script replies", () => {
  it("reads each shape the scripts send", () => {
    expect(parseLeaseReply([0, 1500])).toEqual([0, 1500]);
    const taken = [1, 7, 0, "{}", ["call", "{}"], ['{"role":"user"}'], ""];
    expect(parseLeaseReply(taken)).toEqual(taken);
    expect(parseOpenToolCallReply(["{}", "", 1, 0, "", 0, ""])).toEqual([
      "{}",
      "",
      1,
      0,
      "",
      0,
      "",
    ]);
    const withLast = ["{}", "{}", 0, 1, 1, 2, '{"role":"assistant","content":[]}'];
    expect(parseOpenToolCallReply(withLast)).toEqual(withLast);
    expect(parseSaveReply(-1)).toBe(-1);
    expect(parseSaveReply(-2)).toBe(-2);
    expect(parseSaveReply([1, 0, 1, ["a", "b"]])).toEqual([1, 0, 1, ["a", "b"]]);
    // A finished run's save: its tree link too.
    expect(parseSaveReply([1, 0, 1, [], ""])).toEqual([1, 0, 1, [], ""]);
    expect(parseSaveReply([1, 0, 1, [], "{}"])).toEqual([1, 0, 1, [], "{}"]);
  });

  it("refuses anything else with a BackendError naming the script", () => {
    const malformed: Array<[(value: unknown) => unknown, unknown, string]> = [
      [parseLeaseReply, [2, 5], "ACQUIRE_LEASE"],
      [parseLeaseReply, [0, 5, 1], "ACQUIRE_LEASE"],
      [parseLeaseReply, [1, 7, 0, "{}", ["call", 3], [], ""], "ACQUIRE_LEASE"],
      [parseOpenToolCallReply, ["{}", "", 1, 0], "OPEN_TOOL_CALL"],
      [parseOpenToolCallReply, ["{}", "", 1, 0, ""], "OPEN_TOOL_CALL"],
      [parseOpenToolCallReply, ["{}", "", "1", 0, "", 0, ""], "OPEN_TOOL_CALL"],
      [parseOpenToolCallReply, ["{}", "", 1, 0, "", "1", ""], "OPEN_TOOL_CALL"],
      [parseSaveReply, -3, "SAVE_RUN"],
      [parseSaveReply, [1, 0, 1, "a"], "SAVE_RUN"],
      [parseSaveReply, [1, 0, 1, [], 0], "SAVE_RUN"],
      [parseSaveReply, null, "SAVE_RUN"],
    ];
    for (const [parse, reply, script] of malformed) {
      expect(() => parse(reply)).toThrow(BackendError);
      expect(() => parse(reply)).toThrow(script);
    }
  });
});
