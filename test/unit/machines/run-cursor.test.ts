import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createActor, initialTransition, transition } from "xstate";
import type { ProviderResponse, RunError, ToolResult } from "../../../src/index.js";
import { RunCursor } from "../../../src/machines/run-cursor.js";
import {
  type CallState,
  type RunInput,
  type RunMachine,
  type RunMachineEvent,
  runMachine,
} from "../../../src/machines/run-machine.js";
import { persistedRunSnapshot } from "../../../src/machines/run-snapshot.js";
import { joinRecord } from "../../../src/store/record/decode.js";
import { decodeSummary } from "../../../src/store/record/summary-codec.js";
import { textResponse, toolCallResponse } from "../../../src/testing.js";

const input: RunInput = {
  runId: "run-1",
  sessionId: "session-1",
  messageCount: 1,
  maxIterations: 2,
  agent: "ops",
};

const twoCalls = toolCallResponse([
  { name: "search", input: { query: "a" }, id: "call_a" },
  { name: "search", input: { query: "b" }, id: "call_b" },
]);
const calls = (response: ProviderResponse, status: CallState["status"] = "allowed") =>
  response.toolCalls.map((call): CallState => ({ call, status, reason: "" }));
const result = (toolCallId: string): ToolResult => ({ toolCallId, content: "r", isError: false });
const failure: RunError = { name: "ProviderError", code: "provider_failed", message: "boom" };

const throughLlm = (response: ProviderResponse): RunMachineEvent[] => [
  { type: "COMPOSED", request: { system: "", messages: [], tools: [], prefixKey: null } },
  { type: "LLM_PREPARED", messages: [], tools: [], prefixKey: "k" },
  { type: "PROVIDER_RESPONDED", response, durationMs: 3 },
  { type: "RESPONSE_PROCESSED", response },
];

/** Every kind of transition the machine has, in runs that reach each final state. */
const paths: Record<string, RunMachineEvent[]> = {
  "two iterations, one call asked, decided in two goes, then maxIterations": [
    ...throughLlm(twoCalls),
    { type: "CALLS_PREPARED", calls: calls(twoCalls) },
    {
      type: "PERMISSIONS_RESOLVED",
      calls: calls(twoCalls).map((each) => ({ ...each, status: "asked" as const })),
    },
    { type: "DECIDED", decisions: { call_a: { decision: "allow" } } },
    { type: "DECIDED", decisions: { call_b: { decision: "deny" } } },
    { type: "RECHECKED", calls: calls(twoCalls) },
    { type: "INTERRUPTED", calls: [{ toolCallId: "call_a", reason: "crash", inputHash: "h" }] },
    { type: "DECIDED", decisions: { call_a: { decision: "respond", content: "done" } } },
    { type: "RECHECKED", calls: calls(twoCalls) },
    { type: "TOOLS_DISPATCHED", raw: { call_a: result("call_a") } },
    { type: "RESULTS_PROCESSED", results: [result("call_a"), result("call_b")], handoff: "b" },
    ...throughLlm(twoCalls),
    { type: "CALLS_PREPARED", calls: calls(twoCalls) },
    { type: "PERMISSIONS_RESOLVED", calls: calls(twoCalls) },
    { type: "RECHECKED", calls: calls(twoCalls) },
    { type: "TOOLS_DISPATCHED", raw: { call_a: result("call_a"), call_b: result("call_b") } },
    { type: "RESULTS_PROCESSED", results: [result("call_a"), result("call_b")] },
    { type: "CANCEL", error: failure },
  ],
  "a rejected answer retried, then done": [
    ...throughLlm(textResponse("x")).slice(0, 3),
    {
      type: "OUTPUT_REJECTED",
      response: textResponse("x"),
      feedback: "json please",
      retry: true,
      error: failure,
    },
    ...throughLlm(textResponse("ok")),
    { type: "FAIL", error: failure },
  ],
  "a rejected answer that fails the run": [
    ...throughLlm(textResponse("x")).slice(0, 3),
    {
      type: "OUTPUT_REJECTED",
      response: textResponse("x"),
      feedback: "",
      retry: false,
      error: failure,
    },
  ],
  "cancelled at the provider": [
    ...throughLlm(twoCalls).slice(0, 2),
    { type: "CANCEL", error: failure },
  ],
  "an event the phase does not take": [{ type: "TOOLS_DISPATCHED", raw: {} }],
};

describe("RunCursor", () => {
  for (const [name, events] of Object.entries(paths)) {
    it(`steps as XState's pure transition() does, and the machine leaves no effect to run: ${name}`, () => {
      const cursor = RunCursor.start(input);
      let [expected, actions] = initialTransition(runMachine(), input);
      expect(actions).toEqual([]);
      expect(cursor.getSnapshot().context).toStrictEqual(expected.context);
      for (const event of events) {
        [expected, actions] = transition(runMachine(), expected, event);
        cursor.send(event);
        expect(actions, event.type).toEqual([]);
        const got = cursor.getSnapshot();
        expect([got.value, got.status], event.type).toEqual([expected.value, expected.status]);
        expect(got.context, event.type).toStrictEqual(expected.context);
      }
    });
  }

  it("visits every phase of the machine on those paths", () => {
    const seen = new Set<string>();
    for (const events of Object.values(paths)) {
      const cursor = RunCursor.start(input);
      for (const event of events) {
        cursor.send(event);
        seen.add(String(cursor.getSnapshot().value));
      }
    }
    expect([...seen].sort()).toEqual(Object.keys(runMachine().root.states).sort());
  });

  it("restores a persisted snapshot at every phase and persists it again byte for byte", () => {
    const events = paths["two iterations, one call asked, decided in two goes, then maxIterations"];
    const cursor = RunCursor.start(input);
    for (const event of events ?? []) {
      cursor.send(event);
      const json = JSON.stringify(persistedRunSnapshot(cursor.getSnapshot()));
      const restored = RunCursor.restore(JSON.parse(json));
      expect(JSON.stringify(persistedRunSnapshot(restored.getSnapshot()))).toBe(json);
      expect(JSON.stringify(restored.getPersistedSnapshot())).toBe(json);
      expect(restored.getSnapshot().status).toBe(cursor.getSnapshot().status);
    }
  });
});

// The frozen stored records (never edited: see frozen-fixtures.test.ts) as the store loads them.
const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../fixtures/run-records/${name}`, import.meta.url), "utf8"),
  ) as { document: string; messages: string[]; summary?: string };
const frozen = [
  "v2-completed.stored.json",
  "v3-completed.stored.json",
  "v4-completed.stored.json",
  "v3-parked.stored.json",
  "v4-parked.stored.json",
  "v4-parked-summary-v2.stored.json",
  "v5-dispatch.stored.json",
];

describe("RunCursor on the frozen stored records", () => {
  it.each(frozen)("%s: restores and saves as the actor it replaces did", (name) => {
    const stored = fixture(name);
    const summary =
      stored.summary === undefined ? undefined : decodeSummary("id-2", stored.summary);
    const { snapshot } = joinRecord(stored.document, stored.messages, summary);
    if (snapshot === null) throw new Error(`${name} has no snapshot`);
    // What the worker did before: an actor started from the persisted snapshot.
    const options = { snapshot } as unknown as Parameters<typeof createActor<RunMachine>>[1];
    const actor = createActor(runMachine(), options).start();
    const cursor = RunCursor.restore(snapshot);
    expect(JSON.stringify(persistedRunSnapshot(cursor.getSnapshot()))).toBe(
      JSON.stringify(persistedRunSnapshot(actor.getSnapshot())),
    );
    expect(JSON.stringify(cursor.getPersistedSnapshot())).toBe(
      JSON.stringify(actor.getPersistedSnapshot()),
    );
    if (snapshot.value === "awaitingApproval") {
      // A parked run resumes the same way.
      const decided: RunMachineEvent = {
        type: "DECIDED",
        decisions: { call_1: { decision: "allow", quorumMet: true } },
      };
      actor.send(decided);
      cursor.send(decided);
      expect(cursor.getSnapshot().value).toBe("permissionRecheck");
      expect(JSON.stringify(cursor.getPersistedSnapshot())).toBe(
        JSON.stringify(actor.getPersistedSnapshot()),
      );
    }
    actor.stop();
  });
});
