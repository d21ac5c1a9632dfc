import { describe, expect, it } from "vitest";
import { BackendError, StoreVersionError } from "../../../../src/index.js";
import {
  decodeSummary,
  encodeSummary,
  readAnnouncement,
  readSummary,
  SUMMARY_VERSION,
} from "../../../../src/store/record/summary-codec.js";
import type { RunSummary } from "../../../../src/store/summary.js";
import { thrown } from "../../../support/thrown.js";

const parked: RunSummary = {
  runId: "run-1",
  agent: "ops",
  sessionId: "session-1",
  status: "awaiting_approval",
  phase: "awaitingApproval",
  pending: [{ toolCallId: "c1", name: "delete_file", input: { path: "a" }, reason: "asks" }],
  iterations: 1,
  usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
  error: null,
  createdAt: 1_764_748_801_000,
  updatedAt: 1_764_748_802_500,
};

const failed: RunSummary = {
  ...parked,
  status: "failed",
  phase: "provider",
  pending: [],
  iterations: 0,
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 3, cacheWriteTokens: 0 },
  error: { name: "ProviderError", code: "provider_error", message: "down", phase: "provider" },
};

describe("stored summaries", () => {
  it("round-trip every field, the run id coming from the reader", () => {
    for (const summary of [parked, failed, { ...parked, phase: "dispatch" }]) {
      expect(decodeSummary(summary.runId, encodeSummary(summary))).toEqual(summary);
    }
  });

  it("keep a child run's link (parent, call, root) in optional keys, none on a root", () => {
    const child: RunSummary = {
      ...parked,
      runId: "root.c1.c2",
      parentRunId: "root.c1",
      parentToolCallId: "c2",
      rootRunId: "root",
    };
    expect(decodeSummary(child.runId, encodeSummary(child))).toEqual(child);
    expect(JSON.parse(encodeSummary(child))).toMatchObject({ pr: "root.c1", pc: "c2", rt: "root" });
    expect(JSON.parse(encodeSummary(parked))).not.toHaveProperty("rt");
  });

  it("leave out the run id, initial values and the status's usual phase", () => {
    const stored = JSON.parse(encodeSummary(parked)) as Record<string, unknown>;
    expect(stored).toEqual({
      v: SUMMARY_VERSION,
      a: "ops",
      s: "session-1",
      st: "awaiting_approval",
      c: 1_764_748_801_000,
      t: 1500,
      pd: [["c1", "delete_file", { path: "a" }, "asks"]],
      it: 1,
      u: [10, 5],
    });
    expect(JSON.parse(encodeSummary(failed))).toMatchObject({ ph: "provider", u: [0, 0, 3] });
    expect(JSON.parse(encodeSummary(failed))).not.toHaveProperty("pd");
    expect(encodeSummary(parked).length).toBeLessThan(JSON.stringify(parked).length * 0.75);
  });

  it("carry their version, read the short form stored before it, and refuse a later one", () => {
    expect(SUMMARY_VERSION).toBe(2);
    const { v: _version, ...unversioned } = JSON.parse(encodeSummary(parked)) as Record<
      string,
      unknown
    >;
    expect(decodeSummary("run-1", JSON.stringify(unversioned))).toEqual(parked);
    const later = JSON.stringify({ ...unversioned, v: SUMMARY_VERSION + 1 });
    const refused = thrown(() => decodeSummary("run-1", later));
    expect(refused).toBeInstanceOf(StoreVersionError);
    expect((refused as StoreVersionError).code).toBe("store_version");
    expect((refused as StoreVersionError).message).toContain('The summary of run "run-1"');
    expect(readSummary("run-1", later)).toBeUndefined();
    expect(readAnnouncement(JSON.stringify(["run-1", JSON.parse(later)]))).toBeUndefined();
  });

  it("read a summary stored in the full form (version 3) as it is", () => {
    expect(decodeSummary("run-1", JSON.stringify(parked))).toEqual(parked);
  });

  it("refuse what is not a summary with record_corrupt", () => {
    for (const json of ["{not json", '{"a":"ops"}', "null", '{"runId":7}']) {
      const error = thrown(() => decodeSummary("run-1", json));
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).code).toBe("record_corrupt");
      expect((error as Error).message).toMatch(/^The summary of run "run-1" is corrupt: /);
      expect(readSummary("run-1", json)).toBeUndefined();
    }
    const stored = JSON.parse(encodeSummary(parked)) as Record<string, unknown>;
    for (const change of [{ st: "lost" }, { pd: [["c1", "delete_file", { path: "a" }]] }]) {
      expect(readSummary("run-1", JSON.stringify({ ...stored, ...change }))).toBeUndefined();
    }
  });

  it("are announced with their run id", () => {
    const message = `[${JSON.stringify(parked.runId)},${encodeSummary(parked)}]`;
    expect(readAnnouncement(message)).toEqual(parked);
    for (const bad of ["{", "[]", '["run-1"]', "[7,{}]", `["run-1",{"a":"ops"}]`]) {
      expect(readAnnouncement(bad)).toBeUndefined();
    }
  });
});
