import { describe, expect, it } from "vitest";
import {
  RUN_RECORD_VERSION,
  RunRecord,
  StepJob,
  StoredDecision,
  ToolJob,
} from "../../../src/index.js";
import { endsStream, RunEventSchema } from "../../../src/store/schemas.js";

const stored = {
  schemaVersion: RUN_RECORD_VERSION,
  runId: "run",
  sessionId: "session",
  agent: "support",
  status: "awaiting_approval",
  phase: "awaitingApproval",
  input: {
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    maxIterations: 3,
  },
  snapshot: { status: "active", value: "awaitingApproval", context: { runId: "run" }, extra: 1 },
  result: null,
  createdAt: 1,
  updatedAt: 2,
};

describe("persisted shapes", () => {
  it("reads a version-2 run record, keeping the snapshot's own fields", () => {
    const parsed = RunRecord.parse(stored);
    expect(parsed.snapshot).toEqual(stored.snapshot);
    expect(parsed.status).toBe("awaiting_approval");
  });

  it("refuses a record of another schema version or with an unknown status", () => {
    expect(RunRecord.safeParse({ ...stored, schemaVersion: 1 }).success).toBe(false);
    expect(RunRecord.safeParse({ ...stored, status: "sleeping" }).success).toBe(false);
    expect(
      RunRecord.safeParse({ ...stored, input: { messages: [], maxIterations: 3 } }).success,
    ).toBe(false);
  });

  it("refuses malformed job payloads", () => {
    expect(StepJob.safeParse({ runId: "run" }).success).toBe(true);
    expect(StepJob.safeParse({ runId: "" }).success).toBe(false);
    expect(StepJob.safeParse({ run: 42 }).success).toBe(false);
    expect(ToolJob.safeParse({ runId: "run", iteration: 1, toolCallId: "call_1" }).success).toBe(
      true,
    );
    expect(ToolJob.safeParse({ runId: "run", iteration: 0, toolCallId: "call_1" }).success).toBe(
      false,
    );
    expect(ToolJob.safeParse({ runId: "run", toolCallId: "call_1" }).success).toBe(false);
  });

  it("reads decisions and run events back", () => {
    expect(StoredDecision.safeParse({ id: "d", decision: "allow", decidedAt: 1 }).success).toBe(
      true,
    );
    expect(StoredDecision.safeParse({ id: "d", decision: "maybe", decidedAt: 1 }).success).toBe(
      false,
    );
    expect(RunEventSchema.safeParse({ type: "text_delta", text: "x" }).success).toBe(true);
    expect(RunEventSchema.safeParse({ type: "text_delta" }).success).toBe(false);
    expect(RunEventSchema.safeParse({ type: "unknown" }).success).toBe(false);
  });

  it("a stream ends at a final result, not at an approval wait", () => {
    const result = RunRecord.shape.result.unwrap().parse({
      runId: "run",
      sessionId: "s",
      status: "awaiting_approval",
      output: null,
      error: null,
      agent: "agent",
      pending: [],
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      iterations: 1,
      messages: [],
    });
    expect(endsStream({ type: "result", result })).toBe(false);
    expect(endsStream({ type: "result", result: { ...result, status: "completed" } })).toBe(true);
    expect(endsStream({ type: "text_delta", text: "x" })).toBe(false);
  });
});
