import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  BackendError,
  HarnessError,
  RUN_RECORD_VERSION,
  StoreVersionError,
} from "../../../../src/index.js";
import { decodeStored, parseStoredRecord } from "../../../../src/store/record/codec.js";
import { joinRecord } from "../../../../src/store/record/decode.js";
import { recordDocument } from "../../../../src/store/record/encode.js";
import { decodeSummary, encodeSummary } from "../../../../src/store/record/summary-codec.js";
import { RunSummary, runDetail, summarize } from "../../../../src/store/summary.js";
import { thrown } from "../../../support/thrown.js";

// Frozen when schemaVersion 2 was introduced: never regenerate it in place.
const frozenV2 = readFileSync(
  new URL("../../../fixtures/run-records/v2-completed.json", import.meta.url),
  "utf8",
);

// The same record as the backends store it: a document without the conversation, and the
// conversation's messages. Frozen too.
const frozenV2Stored = JSON.parse(
  readFileSync(
    new URL("../../../fixtures/run-records/v2-completed.stored.json", import.meta.url),
    "utf8",
  ),
) as { document: string; messages: string[] };

// The same run as version 3 stores it (frozen when version 3 was introduced): the document
// leaves out the result and the ids that loading derives from the snapshot.
const frozenV3Stored = JSON.parse(
  readFileSync(
    new URL("../../../fixtures/run-records/v3-completed.stored.json", import.meta.url),
    "utf8",
  ),
) as { document: string; messages: string[] };

// The same completed run as version 4 stores it without a summary (the memory backend), and a
// parked run as version 3 and version 4 store it beside its summary (Redis): frozen when
// version 4 was introduced (the version-3 one written by version 3's code from the same record).
const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../../fixtures/run-records/${name}`, import.meta.url), "utf8"),
  ) as { document: string; messages: string[]; summary: string };
const frozenV4Stored = fixture("v4-completed.stored.json");
const frozenV3Parked = fixture("v3-parked.stored.json");
const frozenV4Parked = fixture("v4-parked.stored.json");
const frozenV4ParkedSummaryV2 = fixture("v4-parked-summary-v2.stored.json");
// A run at dispatch as version 5 stores it beside its summary (frozen when version 5 was
// introduced): two calls kept by reference to the last message's blocks, one as it is.
const frozenV5Dispatch = fixture("v5-dispatch.stored.json");

/** A version-4 document as version 5 writes the same record: only its version differs. */
const asV5 = (document: string) => document.replace('"schemaVersion":4', '"schemaVersion":5');

/**
 * The frozen version-2 record as this version reads it: the same record, as version 4, its
 * conversation out of the machine's context (which keeps its count) into the record's log,
 * and its result naming its agent (the record's: results of that version predate handoffs).
 */
const migratedV2 = (): Record<string, unknown> => {
  const stored = JSON.parse(frozenV2) as {
    snapshot: { context: { messages: unknown[] } & Record<string, unknown> };
    result: Record<string, unknown>;
  } & Record<string, unknown>;
  const { messages, ...position } = stored.snapshot.context;
  const context: Record<string, unknown> = {};
  for (const key in stored.snapshot.context) {
    context[key === "messages" ? "messageCount" : key] =
      key === "messages" ? messages.length : position[key];
  }
  return {
    ...stored,
    schemaVersion: RUN_RECORD_VERSION,
    snapshot: { ...stored.snapshot, context },
    messages,
    result: { agent: stored.agent, ...stored.result },
  };
};

const v5Summary = () => decodeSummary("id-2", frozenV5Dispatch.summary);
const v5Record = () =>
  joinRecord(frozenV5Dispatch.document, frozenV5Dispatch.messages, v5Summary());

describe("stored run records", () => {
  it("keeps loading the frozen version-2 record as the backends stored it, as version 5", () => {
    expect(RUN_RECORD_VERSION).toBe(5);
    const record = joinRecord(frozenV2Stored.document, frozenV2Stored.messages);
    expect(record).toEqual(migratedV2());
    expect(frozenV2Stored.document).not.toContain('old.log"}]},{');
    expect(JSON.parse(frozenV2Stored.document)).toMatchObject({
      input: { messages: 1 },
      snapshot: { context: { messages: 4 } },
      result: { messages: 4 },
    });
  });

  it("keeps loading the frozen version-3 record", () => {
    const record = joinRecord(frozenV3Stored.document, frozenV3Stored.messages);
    expect(record).toEqual(migratedV2());
    // Each message is stored once; the result and the context's ids are derived on load.
    const document = JSON.parse(frozenV3Stored.document) as Record<string, unknown>;
    expect(frozenV3Stored.document).not.toContain('old.log"}]},{');
    expect(document).not.toHaveProperty("result");
    expect(document).toMatchObject({
      schemaVersion: 3,
      sharedIds: true,
      input: { messages: 1 },
      snapshot: { context: { messages: 4 } },
    });
    expect(document.snapshot).not.toHaveProperty("context.runId");
    expect(frozenV3Stored.document.length).toBeLessThan(frozenV2Stored.document.length * 0.75);
  });

  it("keeps loading the frozen version-4 record, and stores it as version 5 does: as it was", () => {
    const record = joinRecord(frozenV4Stored.document, frozenV4Stored.messages);
    expect(record).toEqual(migratedV2());
    // No call and a result it holds: version 5 leaves out nothing more of it.
    expect(recordDocument(record)).toBe(asV5(frozenV4Stored.document));
    // Initial values and a string input's text are filled in on load.
    const document = JSON.parse(frozenV4Stored.document) as Record<string, unknown>;
    expect(document).toMatchObject({ schemaVersion: 4, input: { messages: 1, text: true } });
    for (const field of ["request", "response", "calls", "raw", "error", "maxIterations"]) {
      expect(document).not.toHaveProperty(`snapshot.context.${field}`);
    }
    expect(document).not.toHaveProperty("snapshot.historyValue");
    expect(frozenV4Stored.document.length).toBeLessThan(frozenV3Stored.document.length * 0.8);
  });

  it("keeps loading a parked run as version 3 and version 4 stored it beside its summary", () => {
    const v3 = joinRecord(
      frozenV3Parked.document,
      frozenV3Parked.messages,
      decodeSummary("id-2", frozenV3Parked.summary),
    );
    const summary = decodeSummary("id-2", frozenV4Parked.summary);
    const v4 = joinRecord(frozenV4Parked.document, frozenV4Parked.messages, summary);
    expect(v4).toEqual({ ...v3, schemaVersion: RUN_RECORD_VERSION });
    expect(v4).toMatchObject({ status: "awaiting_approval", input: { text: "Delete old.log" } });
    expect(v4.snapshot?.context.calls).toEqual([
      {
        call: { id: "call_1", name: "delete_file", input: { path: "old.log" } },
        status: "asked",
        reason: "deleting asks a person",
        inputHash: "b23766fe5e9cddb8c4bf5b7d3c62b2d930fee82a99b20b0aeffe60856268c15f",
      },
    ]);
    expect(summarize(v4)).toEqual(summary);
    // Stored as it was: the parked call only once, in the summary's pending list (a call the
    // summary holds is kept by its pending index, before any reference to its message).
    expect(recordDocument(v4, summary)).toBe(asV5(frozenV4Parked.document));
    // The summary is written with its version now (frozen beside the unversioned one).
    expect(encodeSummary(summary)).toBe(frozenV4ParkedSummaryV2.summary);
    expect(decodeSummary("id-2", frozenV4ParkedSummaryV2.summary)).toEqual(summary);
    expect(recordDocument(v4, summary)).toBe(asV5(frozenV4ParkedSummaryV2.document));
    expect(frozenV4Parked.document).not.toContain("delete_file");
    // The input hash is kept in base64url, and read back as the hex the record holds.
    expect(frozenV4Parked.document).not.toContain("b23766fe");
    expect(JSON.parse(frozenV4Parked.document)).toMatchObject({
      snapshot: {
        context: { calls: [{ pending: 0, ih: "sjdm_l6c3bjEv1t9PGKy2TD-6CqZsgsK7_5ghWJowV8" }] },
      },
    });
    const v3Bytes = frozenV3Parked.document.length + frozenV3Parked.summary.length;
    const v4Bytes = frozenV4Parked.document.length + frozenV4Parked.summary.length;
    expect(v4Bytes).toBeLessThan(v3Bytes * 0.6);
  });

  it("keeps a child run's link through its document and its summary (both fields optional)", () => {
    const summary = decodeSummary("id-2", frozenV4Parked.summary);
    const parked = joinRecord(frozenV4Parked.document, frozenV4Parked.messages, summary);
    const child = { ...parked, parentRunId: "root", parentToolCallId: "c1", rootRunId: "root" };
    const childSummary = summarize(child);
    expect(childSummary).toMatchObject({
      parentRunId: "root",
      parentToolCallId: "c1",
      rootRunId: "root",
    });
    const stored = decodeSummary("id-2", encodeSummary(childSummary));
    const again = joinRecord(recordDocument(child, stored), frozenV4Parked.messages, stored);
    expect(again).toEqual(child);
    expect(summarize(again)).toEqual(childSummary);
  });

  it("refuses a parked call that refers to a pending call its summary does not hold", () => {
    const summary = decodeSummary("id-2", frozenV4Parked.summary);
    const error = thrown(() =>
      joinRecord(frozenV4Parked.document, frozenV4Parked.messages, { ...summary, pending: [] }),
    );
    expect(error).toBeInstanceOf(BackendError);
    expect((error as BackendError).code).toBe("record_corrupt");
  });

  it("stores a parked call the summary's pending list does not hold as it is", () => {
    const summary = decodeSummary("id-2", frozenV4Parked.summary);
    const record = joinRecord(frozenV4Parked.document, frozenV4Parked.messages, summary);
    const other = { ...summary, pending: [{ ...summary.pending[0], reason: "another" }] };
    const document = recordDocument(record, other as typeof summary);
    expect(document).toContain("deleting asks a person");
    expect(document).not.toContain('"pending"');
    expect(joinRecord(document, frozenV4Parked.messages, other as typeof summary)).toEqual(record);
  });

  it("leaves to the run's summary what it holds, and needs it to load", () => {
    const record = joinRecord(frozenV3Stored.document, frozenV3Stored.messages);
    const summary = summarize(record);
    const document = recordDocument(record, summary);
    const stored = JSON.parse(document) as Record<string, unknown>;
    expect(stored).toMatchObject({ schemaVersion: RUN_RECORD_VERSION, fromSummary: true });
    for (const field of ["runId", "agent", "status", "phase", "createdAt", "updatedAt"]) {
      expect(stored).not.toHaveProperty(field);
    }
    expect(stored).not.toHaveProperty("snapshot.context.usage");
    expect(document.length).toBeLessThan(frozenV3Stored.document.length);
    expect(joinRecord(document, frozenV3Stored.messages, summary)).toEqual(record);
    expect(thrown(() => joinRecord(document, frozenV3Stored.messages))).toBeInstanceOf(
      BackendError,
    );
  });

  it("stores a result the snapshot does not give, and ids the context does not share", () => {
    const record = joinRecord(frozenV3Stored.document, frozenV3Stored.messages);
    const context = record.snapshot?.context ?? {};
    const odd = {
      ...record,
      snapshot: { ...record.snapshot, context: { ...context, runId: "other" } },
      result: record.result && { ...record.result, output: "not the snapshot's" },
    } as typeof record;
    const document = recordDocument(odd);
    expect(JSON.parse(document)).toMatchObject({ result: { output: "not the snapshot's" } });
    expect(JSON.parse(document)).not.toHaveProperty("sharedIds");
    expect(joinRecord(document, frozenV3Stored.messages)).toEqual(odd);
  });

  it("stores a string input's text as its one message only when that message is exactly it", () => {
    const record = joinRecord(frozenV4Stored.document, frozenV4Stored.messages);
    const inputOf = (document: string) => (JSON.parse(document) as { input: unknown }).input;
    expect(inputOf(recordDocument(record))).toMatchObject({ messages: 1, text: true });
    // Another text, a second message, a message with a key of its own: the text is stored.
    const message = record.input.messages[0] as (typeof record.input.messages)[number];
    const variants = [
      { ...record.input, text: "other" },
      { ...record.input, messages: [message, message] },
      { ...record.input, messages: [{ ...message, name: "x" }] },
      { ...record.input, messages: Object.assign([message], { extra: 1 }) },
    ];
    for (const input of variants) {
      const document = recordDocument({ ...record, input } as typeof record);
      expect(inputOf(document)).toMatchObject({ text: input.text });
    }
    // One input object, saved again and again, is compacted once and stored the same each time.
    const again = { ...record, updatedAt: record.updatedAt + 1 };
    expect(inputOf(recordDocument(again))).toEqual(inputOf(recordDocument(record)));
    expect(joinRecord(recordDocument(again), frozenV4Stored.messages)).toEqual(again);
  });

  it("joins a current document directly as the general join does, key for key", () => {
    // A key of its own sends a document to the general join (which the parse then strips):
    // both must give the same record, in the same key order (a restored machine keeps its
    // context's order, and later saves store it).
    const general = (document: string) =>
      JSON.stringify({ ...(JSON.parse(document) as object), unknownKey: 1 });
    const parkedSummary = decodeSummary("id-2", frozenV4Parked.summary);
    const parked = joinRecord(frozenV4Parked.document, frozenV4Parked.messages, parkedSummary);
    const completed = joinRecord(frozenV4Stored.document, frozenV4Stored.messages);
    const cases: Array<[string, string[], RunSummary | undefined]> = [
      [frozenV4Stored.document, frozenV4Stored.messages, undefined],
      [
        recordDocument(completed, summarize(completed)),
        frozenV4Stored.messages,
        summarize(completed),
      ],
      [frozenV4Parked.document, frozenV4Parked.messages, parkedSummary],
      [recordDocument(parked), frozenV4Parked.messages, undefined],
      [
        recordDocument({ ...parked, priority: 3, trace: { traceparent: "00-a-b-01" } }),
        frozenV4Parked.messages,
        undefined,
      ],
      [frozenV5Dispatch.document, frozenV5Dispatch.messages, v5Summary()],
      [recordDocument(v5Record()), frozenV5Dispatch.messages, undefined],
    ];
    for (const [document, messages, summary] of cases) {
      const direct = joinRecord(document, messages, summary);
      const viaGeneral = joinRecord(general(document), messages, summary);
      expect(JSON.stringify(direct)).toBe(JSON.stringify(viaGeneral));
      expect(Object.keys(direct.snapshot?.context ?? {})).toEqual(
        Object.keys(viaGeneral.snapshot?.context ?? {}),
      );
      expect(direct).toEqual(viaGeneral);
    }
  });

  it("keeps loading the frozen version-5 record at dispatch, and stores it as it was", () => {
    const summary = v5Summary();
    const record = v5Record();
    expect(record).toMatchObject({ schemaVersion: 5, status: "running", result: null });
    expect(record.snapshot?.context.calls).toEqual([
      {
        call: { id: "call_1", name: "delete_file", input: { path: "old.log" } },
        status: "allowed",
        reason: "default: allow",
        inputHash: "b23766fe5e9cddb8c4bf5b7d3c62b2d930fee82a99b20b0aeffe60856268c15f",
      },
      {
        call: { id: "call_2", name: "search", input: { query: "logs" } },
        status: "denied",
        reason: 'rule "search": deny',
      },
      {
        call: { id: "call_3", name: "delete_file", input: { path: "b.log" } },
        status: "allowed",
        reason: "default: allow",
      },
    ]);
    expect(recordDocument(record, summary)).toBe(frozenV5Dispatch.document);
    // The calls that are their block of the last message are kept by its index; one whose
    // input is not its block's is kept as it is; the running run's null result is left out.
    const document = JSON.parse(frozenV5Dispatch.document) as Record<string, unknown>;
    expect(document).not.toHaveProperty("result");
    expect(document).toMatchObject({
      snapshot: {
        context: {
          calls: [
            { m: 1, ih: "sjdm_l6c3bjEv1t9PGKy2TD-6CqZsgsK7_5ghWJowV8" },
            { m: 2, status: "denied", reason: 'rule "search": deny' },
            { call: { id: "call_3" }, status: "allowed", reason: "default: allow" },
          ],
        },
      },
    });
    expect(frozenV5Dispatch.document).not.toContain("old.log");
  });

  it("keeps a call by reference only when it is exactly its block of the last message", () => {
    const record = v5Record();
    const context = record.snapshot?.context as { calls: Array<Record<string, unknown>> };
    const [first] = context.calls as [Record<string, unknown>];
    const call = first.call as Record<string, unknown>;
    const variants = [
      { ...call, name: "search" },
      { ...call, input: { path: "old.log", force: true } },
      { ...call, extra: 1 },
      { id: "call_9", name: call.name, input: call.input },
    ];
    for (const variant of variants) {
      const calls = [{ ...first, call: variant }, ...context.calls.slice(1)];
      const changed = {
        ...record,
        snapshot: { ...record.snapshot, context: { ...context, calls } },
      } as typeof record;
      const document = recordDocument(changed);
      const stored = JSON.parse(document) as { snapshot: { context: { calls: unknown[] } } };
      expect(stored.snapshot.context.calls[0]).toMatchObject({ call: variant });
      expect(joinRecord(document, frozenV5Dispatch.messages)).toEqual(changed);
    }
    // A conversation whose last message is not the assistant's turn: no call is referred to.
    const result = {
      role: "tool",
      content: [{ type: "tool_result", toolCallId: "call_1", content: "ok", isError: false }],
    };
    const conversation = [...(record.messages ?? []), result];
    const moved = {
      ...record,
      messages: conversation,
      snapshot: { ...record.snapshot, context: { ...context, messageCount: 3 } },
    } as typeof record;
    const document = recordDocument(moved);
    expect(document).not.toContain('"m":');
    expect(
      joinRecord(
        document,
        conversation.map((each) => JSON.stringify(each)),
      ),
    ).toEqual(moved);
  });

  it("refuses a call kept by reference to a block the last message does not hold", () => {
    const summary = v5Summary();
    const { document, messages } = frozenV5Dispatch;
    for (const [stored, conversation] of [
      [document.replace('"m":1', '"m":9'), messages],
      [document.replace('"m":1', '"m":0'), messages],
      [document.replace('"m":1', '"m":1.5'), messages],
      [document.replace('"m":1', '"m":null'), messages],
      [document, messages.slice(0, 1)],
      [document, [messages[1], messages[0]]],
    ] as Array<[string, string[]]>) {
      const error = thrown(() => joinRecord(stored, conversation, summary));
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).code).toBe("record_corrupt");
    }
  });

  it("leaves a null result out only where loading derives none", () => {
    const record = v5Record();
    for (const status of ["queued", "running", "waiting", "completed", "awaiting_approval"]) {
      const changed = { ...record, status, result: null } as typeof record;
      const document = recordDocument(changed);
      const kept = status === "completed" || status === "awaiting_approval";
      if (kept) expect(JSON.parse(document)).toHaveProperty("result", null);
      else expect(JSON.parse(document)).not.toHaveProperty("result");
      expect(joinRecord(document, frozenV5Dispatch.messages).result).toBeNull();
    }
  });

  it("refuses a stored document of another version with StoreVersionError", () => {
    const document = JSON.parse(frozenV2Stored.document) as Record<string, unknown>;
    const error = thrown(() =>
      joinRecord(JSON.stringify({ ...document, schemaVersion: 6 }), frozenV2Stored.messages),
    );
    expect(error).toBeInstanceOf(StoreVersionError);
  });

  it("keeps loading the frozen version-2 record, with its summary and detail", () => {
    const record = parseStoredRecord(frozenV2);
    expect(record).toEqual(migratedV2());
    expect(summarize(record)).toEqual({
      runId: "id-1",
      agent: "ops",
      sessionId: "session-1",
      status: "completed",
      phase: "done",
      pending: [],
      iterations: 2,
      usage: { inputTokens: 20, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      error: null,
      createdAt: 1_764_748_801_000,
      updatedAt: 1_764_748_816_000,
    });
    const detail = runDetail(record, []);
    expect(detail.messages).toHaveLength(4);
    expect(detail.messages).toEqual(record.result?.messages);
  });

  it("refuses a record of another version with StoreVersionError, never misreading it", () => {
    const stored = JSON.parse(frozenV2) as Record<string, unknown>;
    for (const version of [1, 6, undefined, "2", "3", "4", "5"]) {
      const json = JSON.stringify({ ...stored, schemaVersion: version });
      const error = thrown(() => parseStoredRecord(json));
      expect(error).toBeInstanceOf(StoreVersionError);
      expect(HarnessError.isHarnessError(error) && error.code).toBe("store_version");
      expect((error as Error).message).toContain('Run "id-1"');
    }
    expect(thrown(() => parseStoredRecord("[]"))).toBeInstanceOf(StoreVersionError);
  });

  it("refuses a version-2 record that does not parse with BackendError", () => {
    const stored = JSON.parse(frozenV2) as Record<string, unknown>;
    const error = thrown(() => parseStoredRecord(JSON.stringify({ ...stored, status: "lost" })));
    expect(error).toBeInstanceOf(BackendError);
    expect((error as Error).message).toContain("status");
  });

  it("summarises a running run from its snapshot's context", () => {
    const record = parseStoredRecord(frozenV2);
    const usage = { inputTokens: 5, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const running = {
      ...record,
      status: "running" as const,
      phase: "provider",
      result: null,
      snapshot: {
        status: "active",
        value: "provider",
        context: { iteration: 1, usage, messageCount: 1 },
      },
      messages: record.input.messages,
    };
    expect(summarize(running)).toMatchObject({ status: "running", iterations: 1, usage });
    expect(runDetail(running, []).messages).toEqual(record.input.messages);
    const queued = { ...running, status: "queued" as const, snapshot: null };
    expect(summarize(queued)).toMatchObject({ iterations: 0, pending: [], error: null });
  });
});

describe("decodeStored", () => {
  it("refuses JSON that does not parse, a wrong shape or a non-object with record_corrupt", () => {
    for (const json of ["{not json", '{"runId":7}', "null", ""]) {
      const error = thrown(() => decodeStored(RunSummary, json, 'The summary of run "r1"'));
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).code).toBe("record_corrupt");
      expect((error as BackendError).message).toMatch(/^The summary of run "r1" is corrupt: /);
    }
  });

  it("refuses a stored record document that is JSON but not an object", () => {
    for (const document of ["null", "7", '"text"']) {
      const error = thrown(() => joinRecord(document, []));
      expect((error as BackendError).code).toBe("record_corrupt");
    }
  });
});
