import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import {
  Message,
  ProviderResponse,
  RunError,
  RunResult,
  RunStatus,
  ToolCall,
  ToolResult,
} from "../core/values.js";
import { HookEvent } from "./events.js";

// Each schema shares its name with the type of `ctx.data` for its event.

export const AgentStartData = lazySchema(() =>
  z.object({
    runId: z.string(),
    sessionId: z.string(),
    input: z.union([z.string(), z.array(Message)]),
  }),
);
export type AgentStartData = z.infer<typeof AgentStartData>;

export const AgentEndData = lazySchema(() => z.object({ result: RunResult }));
export type AgentEndData = z.infer<typeof AgentEndData>;

export const LoopIterationData = lazySchema(() =>
  z.object({
    runId: z.string(),
    iteration: z.number().int().positive(),
  }),
);
export type LoopIterationData = z.infer<typeof LoopIterationData>;

export const LLMRequestData = lazySchema(() =>
  z.object({
    runId: z.string(),
    system: z.string(),
    model: z.string(),
    maxTokens: z.number().int().positive(),
    temperature: z.number(),
    stream: z.boolean(),
    messageCount: z.number().int().nonnegative(),
    toolCount: z.number().int().nonnegative(),
    prefixKey: z.string().nullable(),
  }),
);
export type LLMRequestData = z.infer<typeof LLMRequestData>;

export const LLMResponseData = lazySchema(() =>
  z.object({
    runId: z.string(),
    response: ProviderResponse,
    durationMs: z.number().nonnegative(),
  }),
);
export type LLMResponseData = z.infer<typeof LLMResponseData>;

export const ToolCallStartData = lazySchema(() =>
  z.object({ runId: z.string(), toolCall: ToolCall }),
);
export type ToolCallStartData = z.infer<typeof ToolCallStartData>;

export const ToolCallEndData = lazySchema(() =>
  z.object({
    runId: z.string(),
    toolCall: ToolCall,
    result: ToolResult,
  }),
);
export type ToolCallEndData = z.infer<typeof ToolCallEndData>;

export const ErrorData = lazySchema(() =>
  z.object({ runId: z.string(), error: RunError, phase: z.string() }),
);
export type ErrorData = z.infer<typeof ErrorData>;

export const SkillInvokedData = lazySchema(() =>
  z.object({
    skill: z.string(),
    found: z.boolean(),
    sourcePath: z.string().nullable(),
    bodyChars: z.number().int().nonnegative(),
  }),
);
export type SkillInvokedData = z.infer<typeof SkillInvokedData>;

// A search carries its query and hit count (bundle null: every bundle); a read its path and size.
export const KnowledgeAccessedData = lazySchema(() =>
  z.discriminatedUnion("tool", [
    z.object({
      tool: z.literal("knowledge_search"),
      bundle: z.string().nullable(),
      found: z.boolean(),
      query: z.string(),
      hits: z.number().int().nonnegative(),
    }),
    z.object({
      tool: z.literal("knowledge_read"),
      bundle: z.string(),
      found: z.boolean(),
      path: z.string(),
      bodyChars: z.number().int().nonnegative(),
    }),
  ]),
);
export type KnowledgeAccessedData = z.infer<typeof KnowledgeAccessedData>;

export const SandboxExecData = lazySchema(() =>
  z.object({
    kind: z.enum(["code", "command"]),
    tier: z.string(),
    exitCode: z.number().int().nullable(),
    timedOut: z.boolean(),
    executionTimeMs: z.number().nonnegative(),
  }),
);
export type SandboxExecData = z.infer<typeof SandboxExecData>;

export const CheckpointEventData = lazySchema(() =>
  z.object({
    sessionId: z.string(),
    runId: z.string(),
    /** The status the save stored: `waiting` on a parent whose children run (SPEC §14). */
    status: RunStatus.or(z.enum(["running", "waiting"])),
    phase: z.string(),
  }),
);
export type CheckpointEventData = z.infer<typeof CheckpointEventData>;

/** A handoff: the run goes on under agent `to` (emitted on `from`'s hooks). */
export const HandoffData = lazySchema(() =>
  z.object({ runId: z.string(), from: z.string(), to: z.string() }),
);
export type HandoffData = z.infer<typeof HandoffData>;

/** The payload schema of every built-in event. */
export const HOOK_PAYLOADS = {
  [HookEvent.AGENT_START]: AgentStartData,
  [HookEvent.AGENT_END]: AgentEndData,
  [HookEvent.LOOP_ITERATION_START]: LoopIterationData,
  [HookEvent.LOOP_ITERATION_END]: LoopIterationData,
  [HookEvent.LLM_REQUEST]: LLMRequestData,
  [HookEvent.LLM_RESPONSE]: LLMResponseData,
  [HookEvent.TOOL_CALL_START]: ToolCallStartData,
  [HookEvent.TOOL_CALL_END]: ToolCallEndData,
  [HookEvent.ERROR]: ErrorData,
  [HookEvent.SKILL_INVOKED]: SkillInvokedData,
  [HookEvent.KNOWLEDGE_ACCESSED]: KnowledgeAccessedData,
  [HookEvent.SANDBOX_EXEC]: SandboxExecData,
  [HookEvent.CHECKPOINT]: CheckpointEventData,
  [HookEvent.HANDOFF]: HandoffData,
} as const satisfies Record<HookEvent, z.ZodType>;

/** The type of `ctx.data` for each event. */
export type HookPayloads = { [E in HookEvent]: z.infer<(typeof HOOK_PAYLOADS)[E]> };
