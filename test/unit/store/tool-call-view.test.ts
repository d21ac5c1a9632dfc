import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BackendError, StoreVersionError } from "../../../src/index.js";
import { joinRecord } from "../../../src/store/record/decode.js";
import { decodeSummary } from "../../../src/store/record/summary-codec.js";
import type { RunRecord } from "../../../src/store/schemas.js";
import type { RunSummary } from "../../../src/store/summary.js";
import { toolCallRun } from "../../../src/store/tool-call-view.js";
import { thrown } from "../../support/thrown.js";

// The frozen stored runs of every version (see record-codec.test.ts): a tool job reads them too.
const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../fixtures/run-records/${name}`, import.meta.url), "utf8"),
  ) as { document: string; messages: string[]; summary?: string };

const FIXTURES = [
  "v2-completed.stored.json",
  "v3-completed.stored.json",
  "v4-completed.stored.json",
  "v3-parked.stored.json",
  "v4-parked.stored.json",
  "v5-dispatch.stored.json",
];

/** The stored conversation's last message, as a tool job reads it with the document. */
const lastOf = (messages: readonly string[]) =>
  messages.length === 0
    ? undefined
    : { at: messages.length - 1, json: messages[messages.length - 1] as string };

/** What a tool job read of a run when it loaded the whole record. */
function expectedView(record: RunRecord, toolCallId: string, summary: RunSummary | undefined) {
  const context = record.snapshot?.context as
    | {
        runId: string;
        sessionId: string;
        iteration: number;
        calls: Array<{ call: { id: string } }>;
      }
    | undefined;
  const call = context?.calls.find((state) => state.call.id === toolCallId);
  return {
    runId: record.runId,
    sessionId: record.sessionId,
    agent: record.agent,
    status: record.status,
    phase: record.phase,
    ...(record.trace === undefined ? {} : { trace: record.trace }),
    ...(record.priority === undefined ? {} : { priority: record.priority }),
    ...(summary === undefined ? {} : { summary }),
    ...(context === undefined
      ? {}
      : {
          context: {
            runId: context.runId,
            sessionId: context.sessionId,
            iteration: context.iteration,
          },
        }),
    ...(call === undefined ? {} : { call }),
  };
}

describe("toolCallRun: a tool job's view of a stored run", () => {
  for (const name of FIXTURES) {
    it(`reads ${name} as the whole record gives it, with the conversation's last message only`, () => {
      const stored = fixture(name);
      const summary =
        stored.summary === undefined ? undefined : decodeSummary("id-2", stored.summary);
      const record = joinRecord(stored.document, stored.messages, summary);
      const calls = (record.snapshot?.context as { calls?: Array<{ call: { id: string } }> })
        ?.calls;
      for (const toolCallId of [...(calls ?? []).map((state) => state.call.id), "unknown"]) {
        expect(toolCallRun(stored.document, summary, toolCallId, lastOf(stored.messages))).toEqual(
          expectedView(record, toolCallId, summary),
        );
      }
    });
  }

  it("refuses another version with StoreVersionError and bad data with record_corrupt", () => {
    const stored = fixture("v4-parked.stored.json");
    const summary = decodeSummary("id-2", stored.summary ?? "");
    const document = JSON.parse(stored.document) as Record<string, unknown>;
    const view = (json: string) => thrown(() => toolCallRun(json, summary, "call_1"));

    expect(view(JSON.stringify({ ...document, schemaVersion: 6 }))).toBeInstanceOf(
      StoreVersionError,
    );
    for (const bad of [
      "{not json",
      "null",
      JSON.stringify({ ...document, priority: "high" }),
      stored.document.replace('"pending":0', '"pending":"0"'),
      stored.document.replace('"context":{', '"context":{"iteration":-1,'),
    ]) {
      const error = view(bad);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).code).toBe("record_corrupt");
    }
  });

  it("refuses a call kept by reference to a block the conversation's last message does not hold", () => {
    const stored = fixture("v5-dispatch.stored.json");
    const summary = decodeSummary("id-2", stored.summary ?? "");
    const last = lastOf(stored.messages);
    const read = (document: string, message = last) =>
      toolCallRun(document, summary, "call_1", message);
    expect(read(stored.document).call?.call).toEqual({
      id: "call_1",
      name: "delete_file",
      input: { path: "old.log" },
    });
    const corrupt = [
      // Out of range, a text block, not an index.
      () => read(stored.document.replace('"m":1', '"m":9')),
      () => read(stored.document.replace('"m":1', '"m":0')),
      () => read(stored.document.replace('"m":1', '"m":-1')),
      () => read(stored.document.replace('"m":1', '"m":"1"')),
      // Not the last message the document counts, none read, a user's, not JSON.
      () => read(stored.document, { at: 0, json: stored.messages[0] as string }),
      () => toolCallRun(stored.document, summary, "call_1"),
      () => read(stored.document, { at: 1, json: stored.messages[0] as string }),
      () => read(stored.document, { at: 1, json: "{not json" }),
    ];
    for (const attempt of corrupt) {
      const error = thrown(attempt);
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).code).toBe("record_corrupt");
    }
  });

  it("gives each read of a turn's document its own call state, whatever a reader did to another", () => {
    const stored = fixture("v4-parked.stored.json");
    const summary = decodeSummary("id-2", stored.summary ?? "");
    const first = toolCallRun(stored.document, summary, "call_1");
    const pristine = structuredClone(first.call);
    expect(first.call).toBeDefined();
    (first.call as { status: string }).status = "denied";
    // The same document again (the next tool job of the turn), and with another summary.
    expect(toolCallRun(stored.document, summary, "call_1").call).toEqual(pristine);
    // Read beside another summary, it is read from that one, not from what was read before.
    const changed: RunSummary = { ...summary, iterations: summary.iterations + 1, updatedAt: 9 };
    const again = joinRecord(stored.document, stored.messages, changed);
    expect(toolCallRun(stored.document, changed, "call_1")).toEqual(
      expectedView(again, "call_1", changed),
    );
  });
});
