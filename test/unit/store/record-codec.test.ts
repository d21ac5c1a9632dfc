import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BackendError, HarnessError, StoreVersionError } from "../../../src/index.js";
import { decodeStored, parseStoredRecord } from "../../../src/store/record-codec.js";
import { joinRecord, recordDocument } from "../../../src/store/stored-record.js";
import { RunSummary, runDetail, summarize } from "../../../src/store/summary.js";
import { thrown } from "../../support/thrown.js";

// Frozen when schemaVersion 2 was introduced: never regenerate it in place.
const frozenV2 = readFileSync(
  new URL("../../fixtures/run-records/v2-completed.json", import.meta.url),
  "utf8",
);

// The same record as the backends store it: a document without the conversation, and the
// conversation's messages. Frozen too.
const frozenV2Stored = JSON.parse(
  readFileSync(
    new URL("../../fixtures/run-records/v2-completed.stored.json", import.meta.url),
    "utf8",
  ),
) as { document: string; messages: string[] };

describe("stored run records", () => {
  it("keeps loading the frozen version-2 record as the backends store it", () => {
    const record = joinRecord(frozenV2Stored.document, frozenV2Stored.messages);
    expect(record).toEqual(JSON.parse(frozenV2));
    // Each message is stored once: the document holds no copy of the conversation.
    expect(recordDocument(record)).toBe(frozenV2Stored.document);
    expect(frozenV2Stored.document).not.toContain('old.log"}]},{');
    expect(JSON.parse(frozenV2Stored.document)).toMatchObject({
      input: { messages: 1 },
      snapshot: { context: { messages: 4 } },
      result: { messages: 4 },
    });
  });

  it("refuses a stored document of another version with StoreVersionError", () => {
    const document = JSON.parse(frozenV2Stored.document) as Record<string, unknown>;
    const error = thrown(() =>
      joinRecord(JSON.stringify({ ...document, schemaVersion: 1 }), frozenV2Stored.messages),
    );
    expect(error).toBeInstanceOf(StoreVersionError);
  });

  it("keeps loading the frozen version-2 record, with its summary and detail", () => {
    const record = parseStoredRecord(frozenV2);
    expect(record).toEqual(JSON.parse(frozenV2));
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
    for (const version of [1, 3, undefined, "2"]) {
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
        context: { iteration: 1, usage, messages: record.input.messages },
      },
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
