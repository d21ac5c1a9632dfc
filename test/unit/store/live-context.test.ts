import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import type { ProviderResponse, ToolCall } from "../../../src/core/values.js";
import {
  type CallState,
  type RunMachineEvent,
  runMachine,
} from "../../../src/machines/run-machine.js";
import { persistedRunSnapshot } from "../../../src/machines/run-snapshot.js";
import { checkpointOf } from "../../../src/store/checkpoint.js";
import { liveContext, markLiveContext } from "../../../src/store/live-context.js";
import { parseStoredRecord } from "../../../src/store/record/codec.js";
import { contextView } from "../../../src/store/run-view.js";
import type { PersistedSnapshot, RunRecord } from "../../../src/store/schemas.js";
import { summarize } from "../../../src/store/summary.js";

const base = parseStoredRecord(
  readFileSync(new URL("../../fixtures/run-records/v2-completed.json", import.meta.url), "utf8"),
);

const call: ToolCall = { id: "call_1", name: "search", input: { query: "harnessx" } };
const response: ProviderResponse = {
  content: [{ type: "tool_use", ...call }],
  toolCalls: [call],
  stopReason: "tool_use",
  usage: { inputTokens: 12, outputTokens: 3, cacheReadTokens: 1, cacheWriteTokens: 0 },
  model: "scripted",
};
const calls: CallState[] = [{ call, status: "allowed", reason: "allowed by default" }];
const request = { system: "", messages: [], tools: [], prefixKey: null };

/**
 * The run as a step saves it after `events`: its context the machine's own, marked live as the
 * step marks it.
 */
function savedAt(events: RunMachineEvent[]): RunRecord {
  const actor = createActor(runMachine(), {
    input: {
      runId: base.runId,
      sessionId: base.sessionId,
      messageCount: base.input.messages.length,
      maxIterations: 8,
    },
  }).start();
  for (const event of events) actor.send(event);
  const snapshot = actor.getSnapshot();
  actor.stop();
  markLiveContext(snapshot.context);
  return {
    ...base,
    status: "running",
    phase: snapshot.value,
    result: null,
    snapshot: persistedRunSnapshot(snapshot) as unknown as PersistedSnapshot,
  };
}

const AFTER_RESPONSE: RunMachineEvent[] = [
  { type: "COMPOSED", request },
  { type: "LLM_PREPARED", messages: [], tools: [], prefixKey: null },
  { type: "PROVIDER_RESPONDED", response, durationMs: 42 },
];
const AT_DISPATCH: RunMachineEvent[] = [
  ...AFTER_RESPONSE,
  { type: "RESPONSE_PROCESSED", response },
  { type: "CALLS_PREPARED", calls },
  { type: "PERMISSIONS_RESOLVED", calls },
  { type: "RECHECKED", calls },
];

/** The same record with a deep copy of its context, which no machine of this process made. */
const copied = (record: RunRecord): RunRecord =>
  ({ ...record, snapshot: structuredClone(record.snapshot) }) as RunRecord;

describe("a live machine context", () => {
  it.each([
    ["after a provider response", AFTER_RESPONSE, "afterLlm"],
    ["at dispatch", AT_DISPATCH, "dispatch"],
  ])("reads %s as a parsed copy of it does", (_, events, phase) => {
    const record = savedAt(events);
    expect(record.phase).toBe(phase);
    const stored = copied(record);
    expect(liveContext(record.snapshot?.context)).toBe(record.snapshot?.context);
    expect(liveContext(stored.snapshot?.context)).toBeUndefined();

    expect(summarize(record)).toEqual(summarize(stored));
    expect(checkpointOf(record, 1)).toEqual(checkpointOf(stored, 1));
    expect(contextView(record)).toEqual(contextView(stored));
  });

  it("is what the checkpoint and the summary read their figures from", () => {
    const record = savedAt(AFTER_RESPONSE);
    expect(checkpointOf(record, 1).model).toEqual({
      model: "scripted",
      usage: response.usage,
      durationMs: 42,
      stopReason: "tool_use",
    });
    expect(summarize(record)).toMatchObject({ iterations: 1, phase: "afterLlm" });
  });
});
