import { describe, expect, it } from "vitest";
import type { RunEvent, RunResult } from "../../../../src/index.js";
import { MemoryEventBuffer } from "../../../../src/runtime/memory/event-buffer.js";
import { collect } from "../../../support/collect.js";

const result = (status: RunResult["status"]): RunResult => ({
  runId: "run",
  sessionId: "session",
  status,
  output: null,
  error: null,
  agent: "agent",
  pending: [],
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  iterations: 1,
  messages: [],
});

const delta = (text: string): RunEvent => ({ type: "text_delta", text });

describe("MemoryEventBuffer", () => {
  it("gives every reader the run's events from the start, live or late", async () => {
    const log = new MemoryEventBuffer(100);
    const early = collect(log.read("run"));
    log.publish("run", delta("a"));
    log.publish("other", delta("elsewhere"));
    log.publish("run", { type: "result", result: result("completed") });

    const expected = [delta("a"), { type: "result", result: result("completed") }];
    expect(await early).toEqual(expected);
    expect(await collect(log.read("run"))).toEqual(expected);
  });

  it("keeps reading past an approval wait and ends at the final result", async () => {
    const log = new MemoryEventBuffer(100);
    const reading = collect(log.read("run"));
    log.publish("run", { type: "result", result: result("awaiting_approval") });
    log.publish("run", delta("resumed"));
    log.publish("run", { type: "result", result: result("failed") });
    log.publish("run", delta("ignored"));

    expect((await reading).map((event) => event.type)).toEqual(["result", "text_delta", "result"]);
  });

  it("keeps only the last maxLength events", async () => {
    const log = new MemoryEventBuffer(3);
    for (const text of ["1", "2", "3", "4", "5"]) log.publish("run", delta(text));
    log.publish("run", { type: "result", result: result("cancelled") });

    expect(await collect(log.read("run"))).toEqual([
      delta("4"),
      delta("5"),
      { type: "result", result: result("cancelled") },
    ]);
  });

  it("hands out copies: a reader cannot change what others read", async () => {
    const log = new MemoryEventBuffer(10);
    const event = { type: "text_delta" as const, text: "original" };
    log.publish("run", event);
    event.text = "changed by the publisher";
    log.publish("run", { type: "result", result: result("completed") });

    const first = await collect(log.read("run"));
    (first[0] as { text: string }).text = "changed by a reader";
    expect((await collect(log.read("run")))[0]).toEqual(delta("original"));
  });

  it("close() ends readers that wait for more", async () => {
    const log = new MemoryEventBuffer(10);
    log.publish("run", delta("only"));
    const reader = log.read("run");

    expect(await reader.next()).toEqual({ done: false, value: delta("only") });
    const waiting = reader.next();
    log.close();

    expect(await waiting).toEqual({ done: true, value: undefined });
  });
});
