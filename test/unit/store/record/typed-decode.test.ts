import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { joinRecord, parseDocument } from "../../../../src/store/record/decode.js";
import {
  decodeSummary,
  encodeSummary,
  expandSummary,
  SUMMARY_VERSION,
} from "../../../../src/store/record/summary-codec.js";
import {
  typedCallState,
  typedRecord,
  typedSummary,
} from "../../../../src/store/record/typed-decode.js";
import { CallStateView, RUN_RECORD_VERSION, RunRecord } from "../../../../src/store/schemas.js";
import { RunSummary } from "../../../../src/store/summary.js";
import {
  lastMessageAt,
  parsedShape,
  toolCallRun,
  typedShape,
} from "../../../../src/store/tool-call-view.js";

// The typed decodes take only what zod's parse takes, and give what it gives (the same keys in
// the same order): checked on values drawn at random, near the usual ones and around them.

/** A seeded generator (mulberry32), so a failure names a case that can be run again. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  return { next, pick };
}

const ODD_VALUES = [undefined, null, "", "x", 0, -1, 1.5, 2 ** 60, true, [], {}, [1], { a: 1 }];

/** The same value, with the same keys in the same order (what `toEqual` does not check). */
const same = (a: unknown, b: unknown) => {
  expect(a).toEqual(b);
  expect(JSON.stringify(a)).toBe(JSON.stringify(b));
};

describe("typedSummary", () => {
  const base = () => ({
    v: SUMMARY_VERSION,
    a: "bench",
    s: "session-1",
    st: "running",
    ph: "afterLlm",
    c: 1_764_748_800_000,
    t: 12,
  });

  it("decodes the usual stored summaries, as RunSummary's parse of their expanded form", () => {
    const { pick } = random(1);
    for (let round = 0; round < 300; round++) {
      const summary: RunSummary = {
        runId: pick(["r1", "a-long-run-id"]),
        agent: pick(["bench", "ops"]),
        sessionId: "s",
        status: pick(["queued", "running", "completed", "awaiting_approval", "failed", "paused"]),
        phase: pick(["compose", "afterLlm", "dispatch", "done", "awaitingApproval"]),
        pending: [],
        iterations: pick([0, 1, 7]),
        usage: {
          inputTokens: pick([0, 10]),
          outputTokens: pick([0, 5]),
          cacheReadTokens: pick([0, 3]),
          cacheWriteTokens: pick([0, 2]),
        },
        error: null,
        createdAt: 1_764_748_800_000,
        updatedAt: 1_764_748_800_000 + pick([0, 9]),
        ...(pick([true, false]) ? { parentRunId: "p", parentToolCallId: "c", rootRunId: "p" } : {}),
      };
      const stored = JSON.parse(encodeSummary(summary)) as unknown;
      const typed = typedSummary(summary.runId, stored, SUMMARY_VERSION);
      expect(typed).toBeDefined();
      same(typed, RunSummary.parse(expandSummary(summary.runId, stored)));
      same(decodeSummary(summary.runId, JSON.stringify(stored)), typed);
    }
  });

  it("takes only what the parse takes, and gives what it gives", () => {
    const { next, pick } = random(2);
    const fields = ["v", "a", "s", "st", "ph", "pd", "it", "u", "e", "c", "t", "pr", "pc", "rt"];
    let taken = 0;
    for (let round = 0; round < 3000; round++) {
      const stored: Record<string, unknown> = base();
      for (let changes = Math.floor(next() * 3); changes > 0; changes--) {
        const field = pick(fields);
        const value =
          field === "u"
            ? pick([[1, 2], [0, 0, 0, 0, 0], [1, -1], [null], [1.5], "1", [2 ** 53]])
            : field === "st"
              ? pick(["completed", "queued", "nope", "awaiting_approval"])
              : pick(ODD_VALUES);
        if (value === undefined) delete stored[field];
        else stored[field] = value;
      }
      const runId = next() < 0.9 ? "r1" : "";
      const typed = typedSummary(runId, stored, SUMMARY_VERSION);
      if (typed === undefined) continue;
      taken++;
      const parsed = RunSummary.safeParse(expandSummary(runId, stored));
      expect(parsed.success, JSON.stringify(stored)).toBe(true);
      same(typed, parsed.data);
    }
    // The draw reaches both sides.
    expect(taken).toBeGreaterThan(100);
    expect(taken).toBeLessThan(3000);
  });
});

describe("typedCallState", () => {
  const usual = () => ({
    call: { id: "call_1", name: "noop", input: { query: "harnessx" } },
    status: "allowed",
    reason: "default: allow",
  });

  it("takes only what CallStateView's parse takes, and gives what it gives", () => {
    const { next, pick } = random(3);
    const fields = [
      "call",
      "status",
      "reason",
      "inputHash",
      "decidedBy",
      "interruptions",
      "result",
      "extra",
    ];
    const calls = [
      { id: "c", name: "n", input: {} },
      { name: "n", id: "c", input: { a: [1] } },
      { id: "", name: "n", input: {} },
      { id: "c", name: "n", input: [] },
      { id: "c", name: "n", input: JSON.parse('{"__proto__":{"x":1}}') as unknown },
      { id: "c", name: "n", input: {}, more: 1 },
    ];
    let taken = 0;
    for (let round = 0; round < 3000; round++) {
      const state: Record<string, unknown> = usual();
      for (let changes = Math.floor(next() * 3); changes > 0; changes--) {
        const field = pick(fields);
        const value =
          field === "call"
            ? pick(calls)
            : field === "status"
              ? pick(["asked", "approved", "responded", "maybe"])
              : field === "interruptions"
                ? pick([1, 2, 0, -1, 1.5, "1"])
                : pick(ODD_VALUES);
        if (value === undefined) delete state[field];
        else state[field] = value;
      }
      const typed = typedCallState(state);
      if (typed === undefined) continue;
      taken++;
      const parsed = CallStateView.safeParse(state);
      expect(parsed.success, JSON.stringify(state)).toBe(true);
      same(typed, parsed.data);
    }
    expect(taken).toBeGreaterThan(100);
    expect(taken).toBeLessThan(3000);
  });
});

describe("a tool job's view, typed", () => {
  const fixture = (name: string) =>
    JSON.parse(
      readFileSync(new URL(`../../../fixtures/run-records/${name}`, import.meta.url), "utf8"),
    ) as { document: string; summary?: string; messages: string[] };
  /** The stored conversation's last message, as a tool job reads it. */
  const lastOf = (messages: readonly string[]) => ({
    at: messages.length - 1,
    json: messages[messages.length - 1] as string,
  });
  /** Current documents: the frozen version-5 one, and the version-4 ones as version 5 writes them. */
  const current = () => [
    fixture("v5-dispatch.stored.json"),
    ...["v4-parked.stored.json", "v4-completed.stored.json"].map((name) => {
      const stored = fixture(name);
      return {
        ...stored,
        document: stored.document.replace('"schemaVersion":4', '"schemaVersion":5'),
      };
    }),
  ];
  /** The answer of `read`, or the error it threw. */
  const outcome = (read: () => unknown): unknown => {
    try {
      return read();
    } catch (error) {
      return error;
    }
  };

  it("reads a current document as the parse does, and leaves what it is unsure of to it", () => {
    const { next, pick } = random(4);
    let taken = 0;
    let refused = 0;
    let total = 0;
    for (const stored of current()) {
      const summary =
        stored.summary === undefined ? undefined : decodeSummary("id-2", stored.summary);
      const last = lastOf(stored.messages);
      for (let round = 0; round < 1000; round++) {
        const document = parseDocument(stored.document);
        const snapshot = document.snapshot as { context: Record<string, unknown> } | undefined;
        const context = snapshot?.context ?? {};
        for (let changes = Math.floor(next() * 3); changes > 0; changes--) {
          const where = pick(["context", "context", "top", "call"]);
          const value = pick([...ODD_VALUES, 3, 2, "bench", { traceparent: "00-1" }]);
          if (where === "top") document[pick(["priority", "trace", "phase"])] = value;
          else if (where === "context") {
            context[pick(["iteration", "agent", "runId", "calls", "messages"])] = value;
          } else if (Array.isArray(context.calls) && context.calls.length > 0) {
            const call = pick(context.calls) as Record<string, unknown>;
            if (typeof call !== "object" || call === null) continue;
            call[pick(["status", "reason", "interruptions", "inputHash", "m", "m"])] = value;
          }
        }
        total++;
        const typed = outcome(() => typedShape(document, summary, lastMessageAt(last)));
        const reference = outcome(() =>
          parsedShape(parseDocument(JSON.stringify(document)), summary, lastMessageAt(last)),
        );
        if (typed instanceof Error) {
          // A call referring to no block: refused by both, alike.
          refused++;
          expect(reference, JSON.stringify(document)).toBeInstanceOf(Error);
          expect((reference as { code?: unknown }).code).toBe((typed as { code?: unknown }).code);
          continue;
        }
        if (typed === undefined) continue;
        taken++;
        expect(reference, JSON.stringify(document)).not.toBeInstanceOf(Error);
        const { snapshot: readSnapshot, ...own } = reference as Record<string, unknown>;
        const { snapshot: typedSnapshot, ...typedOwn } = typed as NonNullable<
          ReturnType<typeof typedShape>
        >;
        same(typedOwn, own);
        const readContext = (readSnapshot as { context: Record<string, unknown> } | null)?.context;
        if (readContext === undefined) expect(typedSnapshot).toBeNull();
        else {
          const { runId, sessionId, iteration, calls, agent } = readContext;
          same(typedSnapshot?.context, {
            runId,
            sessionId,
            iteration,
            calls,
            ...(agent === undefined ? {} : { agent }),
          });
        }
      }
    }
    expect(taken).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(10);
    expect(taken + refused).toBeLessThan(total);
  });

  it("is what a tool job reads of the usual document", () => {
    const stored = fixture("v5-dispatch.stored.json");
    const summary = decodeSummary("id-2", stored.summary ?? "");
    const last = lastOf(stored.messages);
    expect(typedShape(parseDocument(stored.document), summary, lastMessageAt(last))).toBeDefined();
    expect(toolCallRun(stored.document, summary, "call_1", last).call).toBeDefined();
  });
});

describe("typedRecord", () => {
  const fixture = JSON.parse(
    readFileSync(
      new URL("../../../fixtures/run-records/v4-parked.stored.json", import.meta.url),
      "utf8",
    ),
  ) as { document: string; messages: string[]; summary: string };
  /** A running record (what a step leases) with every kind of content block. */
  const running = () => {
    const record = JSON.parse(
      JSON.stringify(
        joinRecord(fixture.document, fixture.messages, decodeSummary("id-2", fixture.summary)),
      ),
    ) as Record<string, unknown>;
    record.status = "running";
    record.result = null;
    record.trace = { traceparent: "00-abc-01" };
    (record.messages as unknown[]).push(
      { role: "assistant", content: [{ type: "thinking", text: "hm", providerData: { s: [1] } }] },
      {
        role: "tool",
        content: [{ type: "tool_result", toolCallId: "c", content: "ok", isError: false }],
      },
    );
    return record;
  };

  it("gives the usual record as RunRecord's parse does", () => {
    const record = running();
    const typed = typedRecord(record, RUN_RECORD_VERSION);
    expect(typed).toBeDefined();
    same(typed, RunRecord.parse(record));
  });

  it("takes only what the parse takes, and gives what it gives", () => {
    const { next, pick } = random(5);
    const blocks = [
      { type: "text", text: "a" },
      { text: "a", type: "text" },
      { type: "text", text: 1 },
      { type: "text", text: "a", extra: 1 },
      { type: "thinking", text: "t" },
      { type: "thinking", text: "t", providerData: JSON.parse('{"__proto__":{"a":1}}') as unknown },
      { type: "tool_use", id: "c", name: "n", input: {} },
      { type: "tool_use", id: "", name: "n", input: {} },
      { type: "tool_use", id: "c", name: "n", input: [] },
      { type: "tool_result", toolCallId: "c", content: "x", isError: "no" },
      { type: "image" },
    ];
    let taken = 0;
    const rounds = 3000;
    for (let round = 0; round < rounds; round++) {
      const record = running();
      for (let changes = Math.floor(next() * 3); changes > 0; changes--) {
        const value = pick([...ODD_VALUES, "running", "queued", 4, { traceparent: 1 }]);
        const where = pick(["top", "input", "snapshot", "message", "block"]);
        if (where === "top") {
          record[
            pick([
              "runId",
              "status",
              "phase",
              "result",
              "messages",
              "createdAt",
              "trace",
              "priority",
              "secretInputs",
              "parentRunId",
              "schemaVersion",
              "extra",
            ])
          ] = value;
        } else if (where === "input" && typeof record.input === "object" && record.input !== null) {
          (record.input as Record<string, unknown>)[pick(["text", "maxIterations", "messages"])] =
            value;
        } else if (
          where === "snapshot" &&
          typeof record.snapshot === "object" &&
          record.snapshot !== null
        ) {
          const snapshot = record.snapshot as Record<string, unknown>;
          const key = pick(["status", "value", "context", "historyValue"]);
          if (key === "context" && next() < 0.5) snapshot.context = { messages: [] };
          else snapshot[key] = value;
        } else if (Array.isArray(record.messages) && record.messages.length > 0) {
          const message: unknown = pick(record.messages as unknown[]);
          if (typeof message !== "object" || message === null) continue;
          if (where === "message") {
            (message as Record<string, unknown>)[pick(["role", "content", "extra"])] = value;
          } else {
            const { content } = message as { content?: unknown };
            if (Array.isArray(content)) content[0] = structuredClone(pick(blocks));
          }
        }
      }
      const typed = typedRecord(record, RUN_RECORD_VERSION);
      if (typed === undefined) continue;
      taken++;
      const parsed = RunRecord.safeParse(record);
      expect(parsed.success, JSON.stringify(record)).toBe(true);
      same(typed, parsed.data);
    }
    expect(taken).toBeGreaterThan(100);
    expect(taken).toBeLessThan(rounds);
  });
});
