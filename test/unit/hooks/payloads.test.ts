import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AgentEndData,
  AgentStartData,
  CheckpointEventData,
  ErrorData,
  HOOK_PAYLOADS,
  HookEvent,
  type HookPayloads,
  KnowledgeAccessedData,
  LLMRequestData,
  LLMResponseData,
  LoopIterationData,
  type RunResult,
  SandboxExecData,
  SkillInvokedData,
  ToolCallEndData,
  ToolCallStartData,
} from "../../../src/index.js";
import { textResponse } from "../../../src/testing.js";

const toolCall = { id: "call-1", name: "search", input: { query: "cats" } };
const runResult: RunResult = {
  runId: "run-1",
  sessionId: "session-1",
  status: "completed",
  output: "done",
  error: null,
  agent: "agent",
  pending: [],
  usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
  iterations: 1,
  messages: [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "assistant", content: [{ type: "text", text: "done" }] },
  ],
};

/** One valid payload per event, typed by the event. */
const SAMPLES: { [E in HookEvent]: HookPayloads[E] } = {
  [HookEvent.AGENT_START]: { runId: "run-1", sessionId: "session-1", input: "hi" },
  [HookEvent.AGENT_END]: { result: runResult },
  [HookEvent.HANDOFF]: { runId: "run-1", from: "lead", to: "writer" },
  [HookEvent.LOOP_ITERATION_START]: { runId: "run-1", iteration: 1 },
  [HookEvent.LOOP_ITERATION_END]: { runId: "run-1", iteration: 2 },
  [HookEvent.LLM_REQUEST]: {
    runId: "run-1",
    system: "You are helpful.",
    model: "default",
    maxTokens: 4096,
    temperature: 1,
    stream: false,
    messageCount: 1,
    toolCount: 2,
    prefixKey: null,
  },
  [HookEvent.LLM_RESPONSE]: { runId: "run-1", response: textResponse("hello"), durationMs: 0 },
  [HookEvent.TOOL_CALL_START]: { runId: "run-1", toolCall },
  [HookEvent.TOOL_CALL_END]: {
    runId: "run-1",
    toolCall,
    result: { toolCallId: "call-1", content: "Results", isError: false },
  },
  [HookEvent.ERROR]: {
    runId: "run-1",
    error: { name: "ProviderError", code: "provider_failed", message: "down", phase: "provider" },
    phase: "provider",
  },
  [HookEvent.SKILL_INVOKED]: {
    skill: "pdf",
    found: true,
    sourcePath: "/skills/pdf/SKILL.md",
    bodyChars: 120,
  },
  [HookEvent.KNOWLEDGE_ACCESSED]: {
    tool: "knowledge_search",
    bundle: "handbook",
    found: true,
    query: "holidays",
    hits: 3,
  },
  [HookEvent.SANDBOX_EXEC]: {
    kind: "command",
    tier: "process",
    exitCode: 0,
    timedOut: false,
    executionTimeMs: 12,
  },
  [HookEvent.CHECKPOINT]: {
    sessionId: "session-1",
    runId: "run-1",
    status: "running",
    phase: "provider",
  },
};

const EVENTS = Object.values(HookEvent);

describe("HOOK_PAYLOADS", () => {
  it("has a zod schema for every HookEvent and nothing else", () => {
    expect(Object.keys(HOOK_PAYLOADS).sort()).toEqual([...EVENTS].sort());
    for (const event of EVENTS) expect(HOOK_PAYLOADS[event]).toBeInstanceOf(z.ZodType);
  });

  it("maps each event to the schema exported under the type's name", () => {
    expect(HOOK_PAYLOADS[HookEvent.TOOL_CALL_END]).toBe(ToolCallEndData);
    expect(HOOK_PAYLOADS[HookEvent.TOOL_CALL_START]).toBe(ToolCallStartData);
    expect(HOOK_PAYLOADS[HookEvent.AGENT_START]).toBe(AgentStartData);
    expect(HOOK_PAYLOADS[HookEvent.AGENT_END]).toBe(AgentEndData);
    expect(HOOK_PAYLOADS[HookEvent.LOOP_ITERATION_START]).toBe(LoopIterationData);
    expect(HOOK_PAYLOADS[HookEvent.LOOP_ITERATION_END]).toBe(LoopIterationData);
    expect(HOOK_PAYLOADS[HookEvent.LLM_REQUEST]).toBe(LLMRequestData);
    expect(HOOK_PAYLOADS[HookEvent.LLM_RESPONSE]).toBe(LLMResponseData);
    expect(HOOK_PAYLOADS[HookEvent.ERROR]).toBe(ErrorData);
    expect(HOOK_PAYLOADS[HookEvent.SKILL_INVOKED]).toBe(SkillInvokedData);
    expect(HOOK_PAYLOADS[HookEvent.KNOWLEDGE_ACCESSED]).toBe(KnowledgeAccessedData);
    expect(HOOK_PAYLOADS[HookEvent.SANDBOX_EXEC]).toBe(SandboxExecData);
    expect(HOOK_PAYLOADS[HookEvent.CHECKPOINT]).toBe(CheckpointEventData);
  });

  it("uses snake_case event values matching the seed's names", () => {
    expect(HookEvent.TOOL_CALL_END).toBe("tool_call_end");
    expect(HookEvent.LLM_REQUEST).toBe("llm_request");
    expect(new Set(EVENTS).size).toBe(EVENTS.length);
  });

  it.each(EVENTS)("parses a sample %s payload unchanged", (event) => {
    const sample = SAMPLES[event];
    const parsed = HOOK_PAYLOADS[event].safeParse(sample);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(sample);
    // Payloads are plain data: a JSON round trip keeps them valid and equal.
    expect(HOOK_PAYLOADS[event].parse(JSON.parse(JSON.stringify(sample)))).toEqual(sample);
  });

  it.each(EVENTS)("refuses an empty %s payload", (event) => {
    expect(HOOK_PAYLOADS[event].safeParse({}).success).toBe(false);
  });
});

describe("payload schemas", () => {
  it("AGENT_START accepts a message list as input", () => {
    expect(
      AgentStartData.safeParse({
        runId: "r",
        sessionId: "s",
        input: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      }).success,
    ).toBe(true);
    expect(AgentStartData.safeParse({ runId: "r", sessionId: "s", input: 5 }).success).toBe(false);
  });

  it("TOOL_CALL_END requires a complete tool result", () => {
    const parsed = ToolCallEndData.safeParse({
      runId: "r",
      toolCall,
      result: { toolCallId: "call-1", content: "x" },
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(["result", "isError"]);
  });

  it("LLM_REQUEST carries a prefixKey string or null, never missing", () => {
    const base = SAMPLES[HookEvent.LLM_REQUEST];
    expect(LLMRequestData.safeParse({ ...base, prefixKey: "abc" }).success).toBe(true);
    const { prefixKey: _prefixKey, ...withoutKey } = base;
    expect(LLMRequestData.safeParse(withoutKey).success).toBe(false);
  });

  it("LOOP_ITERATION counts from 1", () => {
    expect(LoopIterationData.safeParse({ runId: "r", iteration: 0 }).success).toBe(false);
    expect(LoopIterationData.safeParse({ runId: "r", iteration: 1.5 }).success).toBe(false);
  });

  it("KNOWLEDGE_ACCESSED accepts a read (path + bodyChars) as well as a search", () => {
    expect(
      KnowledgeAccessedData.safeParse({
        tool: "knowledge_read",
        bundle: "handbook",
        found: false,
        path: "missing.md",
        bodyChars: 0,
      }).success,
    ).toBe(true);
  });

  it("KNOWLEDGE_ACCESSED needs query + hits for a search and path + bodyChars for a read", () => {
    const search = { tool: "knowledge_search", bundle: null, found: false, query: "q", hits: 0 };
    const read = { tool: "knowledge_read", bundle: "kb", found: true, path: "a.md", bodyChars: 3 };
    expect(KnowledgeAccessedData.safeParse(search).success).toBe(true);
    expect(KnowledgeAccessedData.safeParse(read).success).toBe(true);
    const { hits: _hits, ...searchWithoutHits } = search;
    expect(KnowledgeAccessedData.safeParse(searchWithoutHits).success).toBe(false);
    expect(KnowledgeAccessedData.safeParse({ ...read, bundle: null }).success).toBe(false);
    expect(KnowledgeAccessedData.safeParse({ ...search, tool: "knowledge_read" }).success).toBe(
      false,
    );
  });

  it("SANDBOX_EXEC allows a null exit code and only code or command kinds", () => {
    const base = SAMPLES[HookEvent.SANDBOX_EXEC];
    expect(SandboxExecData.safeParse({ ...base, exitCode: null, timedOut: true }).success).toBe(
      true,
    );
    expect(SandboxExecData.safeParse({ ...base, kind: "script" }).success).toBe(false);
  });

  it("CHECKPOINT accepts every run status, running and waiting", () => {
    for (const status of [
      "running",
      "waiting",
      "completed",
      "failed",
      "cancelled",
      "awaiting_approval",
      "paused",
    ]) {
      expect(
        CheckpointEventData.safeParse({ ...SAMPLES[HookEvent.CHECKPOINT], status }).success,
      ).toBe(true);
    }
    expect(
      CheckpointEventData.safeParse({ ...SAMPLES[HookEvent.CHECKPOINT], status: "lost" }).success,
    ).toBe(false);
  });
});
