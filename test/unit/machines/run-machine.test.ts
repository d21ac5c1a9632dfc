import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import type { Message, ProviderResponse, RunError, ToolResult } from "../../../src/index.js";
import {
  type CallState,
  messagesAddedBy,
  PHASES,
  type PreparedRequest,
  type RunInput,
  type RunMachine,
  type RunMachineEvent,
  runMachine,
  STAGE_OF_PHASE,
} from "../../../src/machines/run-machine.js";
import { persistedRunSnapshot } from "../../../src/machines/run-snapshot.js";
import { textResponse, toolCallResponse } from "../../../src/testing.js";

type RunSnapshot = ReturnType<typeof initialTransition<RunMachine>>[0];
type PersistedRun = Pick<RunSnapshot, "value" | "context" | "status">;

const input = (overrides: Partial<RunInput> = {}): RunInput => ({
  runId: "run-1",
  sessionId: "session-1",
  messageCount: 1,
  maxIterations: 5,
  ...overrides,
});

const hello: Message = { role: "user", content: [{ type: "text", text: "hello" }] };

const start = (overrides: Partial<RunInput> = {}): RunSnapshot =>
  initialTransition(runMachine(), input(overrides))[0];

const send = (snapshot: RunSnapshot, ...events: RunMachineEvent[]): RunSnapshot =>
  events.reduce((current, event) => transition(runMachine(), current, event)[0], snapshot);

const request = (_snapshot: RunSnapshot): PreparedRequest => ({
  system: "be brief",
  messages: [hello],
  tools: [],
  prefixKey: null,
});

const callStates = (
  response: ProviderResponse,
  status: CallState["status"] = "allowed",
): CallState[] => response.toolCalls.map((call) => ({ call, status, reason: "" }));

const resultOf = (toolCallId: string, content: string): ToolResult => ({
  toolCallId,
  content,
  isError: false,
});

/** compose → beforeLlm → provider → afterLlm with `response`; stops after RESPONSE_PROCESSED. */
const throughLlm = (snapshot: RunSnapshot, response: ProviderResponse): RunSnapshot => {
  const composed = send(snapshot, { type: "COMPOSED", request: request(snapshot) });
  return send(
    composed,
    {
      type: "LLM_PREPARED",
      messages: [hello],
      tools: [],
      prefixKey: "key-1",
    },
    { type: "PROVIDER_RESPONDED", response, durationMs: 12 },
    { type: "RESPONSE_PROCESSED", response },
  );
};

const twoCalls = toolCallResponse([
  { name: "search", input: { query: "a" }, id: "call_a" },
  { name: "search", input: { query: "b" }, id: "call_b" },
]);

/** A run parked in awaitingApproval with call_a allowed and call_b asked. */
const parkedWithOneAsk = (): RunSnapshot => {
  const atPermission = send(throughLlm(start(), twoCalls), {
    type: "CALLS_PREPARED",
    calls: callStates(twoCalls),
  });
  const [allowed, asked] = callStates(twoCalls);
  return send(atPermission, {
    type: "PERMISSIONS_RESOLVED",
    calls: [allowed!, { ...asked!, status: "asked", reason: "needs a person" }],
  });
};

const failure: RunError = {
  name: "ProviderError",
  code: "provider_failed",
  message: "boom",
  phase: "provider",
};

describe("runMachine", () => {
  it("starts in compose with the input's position in its context, not its messages", () => {
    const snapshot = start();
    expect(snapshot.value).toBe("compose");
    expect(snapshot.status).toBe("active");
    expect(snapshot.context).toMatchObject({
      runId: "run-1",
      sessionId: "session-1",
      maxIterations: 5,
      iteration: 0,
      messageCount: 1,
      output: null,
      error: null,
      calls: [],
    });
  });

  it("walks compose → beforeLlm → provider → afterLlm → done on a text answer", () => {
    const response = textResponse("the answer");
    let snapshot = start();
    const visited: string[] = [String(snapshot.value)];

    snapshot = send(snapshot, { type: "COMPOSED", request: request(snapshot) });
    visited.push(String(snapshot.value));
    expect(snapshot.context.iteration).toBe(1);
    expect(snapshot.context.request?.system).toBe("be brief");

    snapshot = send(snapshot, {
      type: "LLM_PREPARED",
      messages: [hello],
      tools: [],
      prefixKey: "key-1",
    });
    visited.push(String(snapshot.value));
    expect(snapshot.context.request?.prefixKey).toBe("key-1");

    snapshot = send(snapshot, { type: "PROVIDER_RESPONDED", response, durationMs: 7 });
    visited.push(String(snapshot.value));
    expect(snapshot.context.response).toEqual(response);
    expect(snapshot.context.responseMs).toBe(7);

    snapshot = send(snapshot, { type: "RESPONSE_PROCESSED", response });
    visited.push(String(snapshot.value));

    expect(visited).toEqual(["compose", "beforeLlm", "provider", "afterLlm", "done"]);
    expect(snapshot.status).toBe("done");
    expect(snapshot.context.output).toBe("the answer");
    // The answer is counted; the engine appends the message the event adds to the run's log.
    expect(snapshot.context.messageCount).toBe(2);
    expect(messagesAddedBy({ type: "RESPONSE_PROCESSED", response })).toEqual([
      {
        role: "assistant",
        content: response.content,
      },
    ]);
    expect(Object.keys(snapshot.context)).not.toContain("messages");
    expect(snapshot.context.usage).toEqual(response.usage);
    expect(snapshot.context.request).toBeNull();
    expect(snapshot.context.response).toBeNull();
  });

  it("stores the processed response, not the raw one", () => {
    const processed = textResponse("processed");
    const composed = send(start(), { type: "COMPOSED", request: request(start()) });
    const done = send(
      composed,
      { type: "LLM_PREPARED", messages: [], tools: [], prefixKey: null },
      { type: "PROVIDER_RESPONDED", response: textResponse("raw"), durationMs: 1 },
      { type: "RESPONSE_PROCESSED", response: processed },
    );
    expect(done.context.output).toBe("processed");
  });

  it("takes the tool path and loops back to compose with one tool message in call order", () => {
    let snapshot = throughLlm(start(), twoCalls);
    const visited: string[] = [String(snapshot.value)];
    expect(snapshot.context.messageCount).toBe(2);
    expect(messagesAddedBy({ type: "RESPONSE_PROCESSED", response: twoCalls })).toEqual([
      {
        role: "assistant",
        content: twoCalls.content,
      },
    ]);

    snapshot = send(snapshot, { type: "CALLS_PREPARED", calls: callStates(twoCalls) });
    visited.push(String(snapshot.value));
    snapshot = send(snapshot, { type: "PERMISSIONS_RESOLVED", calls: callStates(twoCalls) });
    visited.push(String(snapshot.value));
    snapshot = send(snapshot, { type: "RECHECKED", calls: callStates(twoCalls) });
    visited.push(String(snapshot.value));
    snapshot = send(snapshot, {
      type: "TOOLS_DISPATCHED",
      raw: { call_b: resultOf("call_b", "raw b"), call_a: resultOf("call_a", "raw a") },
    });
    visited.push(String(snapshot.value));
    expect(snapshot.context.raw).toEqual({
      call_a: resultOf("call_a", "raw a"),
      call_b: resultOf("call_b", "raw b"),
    });

    const processed: RunMachineEvent = {
      type: "RESULTS_PROCESSED",
      results: [resultOf("call_a", "A"), resultOf("call_b", "B")],
    };
    snapshot = send(snapshot, processed);
    visited.push(String(snapshot.value));

    expect(visited).toEqual([
      "toolValidate",
      "permission",
      "permissionRecheck",
      "dispatch",
      "afterTool",
      "compose",
    ]);
    expect(snapshot.context.iteration).toBe(1);
    expect(snapshot.context.messageCount).toBe(3);
    expect(messagesAddedBy(processed)).toEqual([
      {
        role: "tool",
        content: [
          { type: "tool_result", toolCallId: "call_a", content: "A", isError: false },
          { type: "tool_result", toolCallId: "call_b", content: "B", isError: false },
        ],
      },
    ]);
    expect(snapshot.context.calls).toEqual([]);
    expect(snapshot.context.raw).toEqual({});

    // The next iteration counts up and ends the run on a text answer.
    const done = throughLlm(snapshot, textResponse("finished"));
    expect(done.value).toBe("done");
    expect(done.context.iteration).toBe(2);
    expect(done.context.output).toBe("finished");
    expect(done.context.usage.inputTokens).toBe(
      twoCalls.usage.inputTokens + textResponse("finished").usage.inputTokens,
    );
  });

  it("parks in awaitingApproval when a call is asked", () => {
    const parked = parkedWithOneAsk();
    expect(parked.value).toBe("awaitingApproval");
    expect(parked.status).toBe("active");
    expect(parked.context.calls.map((each) => each.status)).toEqual(["allowed", "asked"]);
  });

  it("stays in awaitingApproval while a decision is missing", () => {
    const atPermission = send(throughLlm(start(), twoCalls), {
      type: "CALLS_PREPARED",
      calls: callStates(twoCalls),
    });
    const parked = send(atPermission, {
      type: "PERMISSIONS_RESOLVED",
      calls: callStates(twoCalls, "asked"),
    });
    expect(parked.value).toBe("awaitingApproval");

    const partly = send(parked, {
      type: "DECIDED",
      decisions: { call_a: { decision: "allow", by: "ops" } },
    });
    expect(partly.value).toBe("awaitingApproval");
    expect(partly.context.calls.map((each) => each.status)).toEqual(["approved", "asked"]);
    expect(partly.context.calls[0]?.decidedBy).toBe("ops");

    const complete = send(partly, {
      type: "DECIDED",
      decisions: { call_b: { decision: "deny", reason: "too risky" } },
    });
    expect(complete.value).toBe("permissionRecheck");
    expect(complete.context.calls.map((each) => [each.status, each.reason])).toEqual([
      ["approved", "approved"],
      ["rejected", "too risky"],
    ]);
  });

  it("goes to permissionRecheck once every asked call is decided", () => {
    const decided = send(parkedWithOneAsk(), {
      type: "DECIDED",
      decisions: { call_b: { decision: "allow" } },
    });
    expect(decided.value).toBe("permissionRecheck");
    expect(decided.context.calls.map((each) => each.status)).toEqual(["allowed", "approved"]);
    expect(decided.context.calls[1]?.inputHash).toBeUndefined();
  });

  it("parks again when the recheck asks", () => {
    const decided = send(parkedWithOneAsk(), {
      type: "DECIDED",
      decisions: { call_b: { decision: "allow" } },
    });
    const [first, second] = decided.context.calls;
    const reparked = send(decided, {
      type: "RECHECKED",
      calls: [{ ...first!, status: "asked", reason: "policy changed" }, second!],
    });
    expect(reparked.value).toBe("awaitingApproval");
    expect(reparked.context.calls[0]?.status).toBe("asked");
  });

  describe("INTERRUPTED (durable runs: a crash interrupted a handler whose recovery is ask)", () => {
    const atDispatch = (): RunSnapshot =>
      send(
        throughLlm(start(), twoCalls),
        { type: "CALLS_PREPARED", calls: callStates(twoCalls) },
        { type: "PERMISSIONS_RESOLVED", calls: callStates(twoCalls) },
        { type: "RECHECKED", calls: callStates(twoCalls) },
      );
    const interrupted = (toolCallId: string, inputHash = "hash-b") => ({
      type: "INTERRUPTED" as const,
      calls: [{ toolCallId, reason: "interrupted by a crash", inputHash }],
    });

    it("parks the interrupted call from dispatch, one interruption more", () => {
      const dispatching = atDispatch();
      expect(dispatching.value).toBe("dispatch");

      const parked = send(dispatching, interrupted("call_b"));

      expect(parked.value).toBe("awaitingApproval");
      expect(parked.context.calls[0]).toEqual(dispatching.context.calls[0]);
      expect(parked.context.calls[1]).toEqual({
        call: twoCalls.toolCalls[1],
        status: "asked",
        reason: "interrupted by a crash",
        inputHash: "hash-b",
        interruptions: 1,
      });
    });

    it("runs the call again after approval and counts a second interruption", () => {
      const approved = send(atDispatch(), interrupted("call_b"), {
        type: "DECIDED",
        decisions: { call_b: { decision: "allow", by: "ops" } },
      });
      expect(approved.value).toBe("permissionRecheck");
      expect(approved.context.calls[1]).toMatchObject({
        status: "approved",
        decidedBy: "ops",
        interruptions: 1,
      });
      expect(approved.context.calls[1]?.inputHash).toBeUndefined();

      const again = send(
        approved,
        { type: "RECHECKED", calls: approved.context.calls },
        interrupted("call_b", "hash-b2"),
      );
      expect(again.value).toBe("awaitingApproval");
      expect(again.context.calls[1]).toEqual({
        call: twoCalls.toolCalls[1],
        status: "asked",
        reason: "interrupted by a crash",
        inputHash: "hash-b2",
        interruptions: 2,
      });
    });

    it("a denied interrupted call gets no handler: the recheck gives it an error result", () => {
      const denied = send(atDispatch(), interrupted("call_a"), {
        type: "DECIDED",
        decisions: { call_a: { decision: "deny", reason: "not again" } },
      });
      expect(denied.value).toBe("permissionRecheck");
      expect(denied.context.calls.map((each) => each.status)).toEqual(["rejected", "allowed"]);
    });

    it("ignores an INTERRUPTED that names no call running a handler, or outside dispatch", () => {
      const dispatching = atDispatch();
      const unknown = send(dispatching, interrupted("call_9"));
      expect(unknown.value).toBe("dispatch");
      expect(unknown.context).toEqual(dispatching.context);

      const atRecheck = send(throughLlm(start(), twoCalls), {
        type: "CALLS_PREPARED",
        calls: callStates(twoCalls),
      });
      const early = send(atRecheck, interrupted("call_b"));
      expect(early.value).toBe("permission");
      expect(early.context).toEqual(atRecheck.context);

      const parked = parkedWithOneAsk();
      const whileParked = send(parked, interrupted("call_a"));
      expect(whileParked.value).toBe("awaitingApproval");
      expect(whileParked.context).toEqual(parked.context);
    });

    it("leaves a denied call alone", () => {
      const [allowed, other] = callStates(twoCalls);
      const atRecheck = send(
        throughLlm(start(), twoCalls),
        { type: "CALLS_PREPARED", calls: callStates(twoCalls) },
        { type: "PERMISSIONS_RESOLVED", calls: callStates(twoCalls) },
      );
      const dispatching = send(atRecheck, {
        type: "RECHECKED",
        calls: [allowed!, { ...other!, status: "denied", reason: "no" }],
      });
      const next = send(dispatching, interrupted("call_b"));
      expect(next.value).toBe("dispatch");
      expect(next.context.calls[1]?.status).toBe("denied");
    });
  });

  it("fails with a MaxIterationsError when afterTool is reached at maxIterations", () => {
    const response = toolCallResponse([{ name: "search", input: {}, id: "call_1" }]);
    const atAfterTool = send(
      throughLlm(start({ maxIterations: 1 }), response),
      { type: "CALLS_PREPARED", calls: callStates(response) },
      { type: "PERMISSIONS_RESOLVED", calls: callStates(response) },
      { type: "RECHECKED", calls: callStates(response) },
      { type: "TOOLS_DISPATCHED", raw: { call_1: resultOf("call_1", "raw") } },
    );
    expect(atAfterTool.value).toBe("afterTool");

    const failed = send(atAfterTool, {
      type: "RESULTS_PROCESSED",
      results: [resultOf("call_1", "done")],
    });
    expect(failed.value).toBe("failed");
    expect(failed.status).toBe("done");
    expect(failed.context.error).toEqual({
      name: "MaxIterationsError",
      code: "max_iterations",
      message: expect.stringContaining("maxIterations (1)") as string,
      phase: "afterTool",
    });
    // The last results still enter the conversation.
    expect(failed.context.messageCount).toBe(3);
  });

  describe("FAIL and CANCEL", () => {
    const response = toolCallResponse([{ name: "search", input: {}, id: "call_1" }]);
    const working: Record<string, () => RunSnapshot> = {
      compose: () => start(),
      beforeLlm: () => send(start(), { type: "COMPOSED", request: request(start()) }),
      provider: () =>
        send(
          start(),
          { type: "COMPOSED", request: request(start()) },
          { type: "LLM_PREPARED", messages: [], tools: [], prefixKey: null },
        ),
      afterLlm: () =>
        send(
          start(),
          { type: "COMPOSED", request: request(start()) },
          { type: "LLM_PREPARED", messages: [], tools: [], prefixKey: null },
          { type: "PROVIDER_RESPONDED", response, durationMs: 1 },
        ),
      toolValidate: () => throughLlm(start(), response),
      permission: () =>
        send(throughLlm(start(), response), {
          type: "CALLS_PREPARED",
          calls: callStates(response),
        }),
      awaitingApproval: () => parkedWithOneAsk(),
      permissionRecheck: () =>
        send(
          throughLlm(start(), response),
          { type: "CALLS_PREPARED", calls: callStates(response) },
          { type: "PERMISSIONS_RESOLVED", calls: callStates(response) },
        ),
      dispatch: () =>
        send(
          throughLlm(start(), response),
          { type: "CALLS_PREPARED", calls: callStates(response) },
          { type: "PERMISSIONS_RESOLVED", calls: callStates(response) },
          { type: "RECHECKED", calls: callStates(response) },
        ),
      afterTool: () =>
        send(
          throughLlm(start(), response),
          { type: "CALLS_PREPARED", calls: callStates(response) },
          { type: "PERMISSIONS_RESOLVED", calls: callStates(response) },
          { type: "RECHECKED", calls: callStates(response) },
          { type: "TOOLS_DISPATCHED", raw: { call_1: resultOf("call_1", "raw") } },
        ),
    };

    it("covers every working phase", () => {
      expect(Object.keys(working).sort()).toEqual([...PHASES].sort());
    });

    for (const [phase, reach] of Object.entries(working)) {
      it(`FAIL in ${phase} ends failed with the error`, () => {
        const snapshot = reach();
        expect(snapshot.value).toBe(phase);
        const failed = send(snapshot, { type: "FAIL", error: failure });
        expect(failed.value).toBe("failed");
        expect(failed.status).toBe("done");
        expect(failed.context.error).toEqual(failure);
        expect(failed.context.request).toBeNull();
        expect(failed.context.response).toBeNull();
      });

      it(`CANCEL in ${phase} ends cancelled with the error`, () => {
        const error: RunError = {
          name: "RunCancelledError",
          code: "run_cancelled",
          message: "cancelled",
          phase,
        };
        const cancelled = send(reach(), { type: "CANCEL", error });
        expect(cancelled.value).toBe("cancelled");
        expect(cancelled.status).toBe("done");
        expect(cancelled.context.error).toEqual(error);
      });
    }
  });

  it("ignores events once final", () => {
    const done = throughLlm(start(), textResponse("ok"));
    const failed = send(start(), { type: "FAIL", error: failure });
    const cancelled = send(start(), {
      type: "CANCEL",
      error: { name: "RunCancelledError", code: "run_cancelled", message: "cancelled" },
    });
    const later: RunMachineEvent[] = [
      { type: "FAIL", error: { name: "Other", code: "other", message: "later" } },
      { type: "CANCEL", error: { name: "Other", code: "other", message: "later" } },
      { type: "COMPOSED", request: request(start()) },
      { type: "RESPONSE_PROCESSED", response: textResponse("again") },
    ];
    for (const final of [done, failed, cancelled]) {
      for (const event of later) {
        const next = send(final, event);
        expect(next.value).toBe(final.value);
        expect(next.status).toBe("done");
        expect(next.context).toEqual(final.context);
      }
    }
  });

  it("ignores events that do not belong to the current phase", () => {
    const snapshot = start();
    const next = send(snapshot, { type: "RESPONSE_PROCESSED", response: textResponse("early") });
    expect(next.value).toBe("compose");
    expect(next.context).toEqual(snapshot.context);
  });

  it("names a stage for every working phase", () => {
    const stages = STAGE_OF_PHASE as Record<string, string | undefined>;
    for (const phase of PHASES) {
      if (phase === "awaitingApproval") {
        expect(stages[phase]).toBeUndefined();
        continue;
      }
      expect(typeof stages[phase]).toBe("string");
      expect(stages[phase]).not.toBe("");
    }
    expect(new Set(Object.values(STAGE_OF_PHASE)).size).toBe(Object.keys(STAGE_OF_PHASE).length);
  });

  describe("persisted snapshots", () => {
    const snapshots: Record<string, () => RunSnapshot> = {
      compose: () => start(),
      awaitingApproval: () => parkedWithOneAsk(),
      done: () => throughLlm(start(), textResponse("ok")),
      failed: () => send(start(), { type: "FAIL", error: failure }),
    };

    for (const [name, make] of Object.entries(snapshots)) {
      it(`round-trips through JSON and resolveState (${name})`, () => {
        const snapshot = make();
        const persisted = runMachine().getPersistedSnapshot(snapshot);
        const copied = JSON.parse(JSON.stringify(persisted)) as PersistedRun;
        expect(copied).toEqual(persisted);

        const restored = runMachine().resolveState({
          value: copied.value,
          context: copied.context,
        });
        expect(restored.value).toEqual(snapshot.value);
        expect(restored.context).toEqual(snapshot.context);
      });
    }

    it("persistedRunSnapshot gives what getPersistedSnapshot gives, at every phase", () => {
      const response = toolCallResponse([{ id: "call_a", name: "search", input: { q: "x" } }]);
      const seen: RunSnapshot[] = [start()];
      const visit = (snapshot: RunSnapshot) => {
        seen.push(snapshot);
        return snapshot;
      };
      const dispatched = visit(
        send(
          visit(throughLlm(start(), response)),
          { type: "CALLS_PREPARED", calls: callStates(response) },
          { type: "PERMISSIONS_RESOLVED", calls: callStates(response) },
          { type: "RECHECKED", calls: callStates(response) },
        ),
      );
      const after = visit(
        send(dispatched, { type: "TOOLS_DISPATCHED", raw: { call_a: resultOf("call_a", "r") } }),
      );
      visit(send(after, { type: "RESULTS_PROCESSED", results: [resultOf("call_a", "r")] }));
      visit(parkedWithOneAsk());
      visit(throughLlm(start(), textResponse("ok")));
      visit(send(start(), { type: "FAIL", error: failure }));
      expect(new Set(seen.map((snapshot) => String(snapshot.value))).size).toBeGreaterThan(5);

      for (const snapshot of seen) {
        expect(persistedRunSnapshot(snapshot)).toStrictEqual(
          runMachine().getPersistedSnapshot(snapshot),
        );
      }
    });

    it("continues from a restored awaitingApproval snapshot", () => {
      const parked = parkedWithOneAsk();
      const copied = JSON.parse(
        JSON.stringify(runMachine().getPersistedSnapshot(parked)),
      ) as PersistedRun;
      const restored = runMachine().resolveState({ value: copied.value, context: copied.context });
      const decided = send(restored, {
        type: "DECIDED",
        decisions: { call_b: { decision: "allow" } },
      });
      expect(decided.value).toBe("permissionRecheck");
    });
  });
});
