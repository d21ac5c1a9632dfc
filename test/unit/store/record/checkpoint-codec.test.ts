import { describe, expect, it } from "vitest";
import { BackendError } from "../../../../src/index.js";
import type { StoredCheckpoint } from "../../../../src/store/checkpoint.js";
import {
  decodeCheckpoint,
  encodeCheckpoint,
} from "../../../../src/store/record/checkpoint-codec.js";
import { thrown } from "../../../support/thrown.js";

const afterLlm: StoredCheckpoint = {
  at: 1_764_748_801_000,
  phase: "afterLlm",
  status: "running",
  iteration: 1,
  model: {
    model: "gpt-5-mini",
    usage: { inputTokens: 120, outputTokens: 14, cacheReadTokens: 0, cacheWriteTokens: 0 },
    durationMs: 840,
    stopReason: "tool_use",
  },
};

const resultsIn: StoredCheckpoint = {
  at: 1_764_748_802_000,
  phase: "compose",
  status: "running",
  iteration: 1,
  raw: { c1: null, c2: { content: "token=abc", isError: false } },
};

const cached: StoredCheckpoint = {
  ...afterLlm,
  model: {
    model: "claude",
    usage: { inputTokens: 0, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 9 },
    durationMs: 0,
    stopReason: "end_turn",
  },
};

const finished: StoredCheckpoint = { at: 5, phase: "done", status: "completed", iteration: 0 };

const what = 'A checkpoint of run "r1"';

describe("stored checkpoints", () => {
  it("round-trip every field: model calls, raw outcomes, statuses and iteration 0", () => {
    for (const checkpoint of [afterLlm, resultsIn, cached, finished]) {
      expect(decodeCheckpoint(encodeCheckpoint(checkpoint), what)).toEqual(checkpoint);
    }
  });

  it("are stored in a short form, well under the full JSON", () => {
    expect(encodeCheckpoint(afterLlm).length).toBeLessThan(JSON.stringify(afterLlm).length / 2);
    expect(encodeCheckpoint(finished).length).toBeLessThan(JSON.stringify(finished).length);
    expect(JSON.parse(encodeCheckpoint(afterLlm))).toEqual({
      t: afterLlm.at,
      p: "afterLlm",
      i: 1,
      m: ["gpt-5-mini", 840, "tool_use", 120, 14],
    });
  });

  it("read a checkpoint stored in the full form as it is", () => {
    expect(decodeCheckpoint(JSON.stringify(afterLlm), what)).toEqual(afterLlm);
  });

  it("refuse a corrupt entry with record_corrupt, naming it", () => {
    for (const json of ["{", '{"t":"soon","p":"done"}', '{"t":1,"p":"done","m":[1]}']) {
      const error = thrown(() => decodeCheckpoint(json, what));
      expect(error).toBeInstanceOf(BackendError);
      expect(error).toMatchObject({ code: "record_corrupt" });
      expect((error as Error).message).toContain(what);
    }
  });
});
