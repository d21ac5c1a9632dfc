// The public API of harnessx. Names are re-exported one by one; nothing else is public.

export type { Clock, RuntimeDeps } from "./core/deps.js";
export {
  ApprovalError,
  ConfigError,
  HarnessError,
  type HarnessErrorCode,
  type HarnessErrorOptions,
  MaxIterationsError,
  MiddlewareContractError,
  MiddlewareError,
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorOptions,
  ProviderMissingError,
  RunCancelledError,
  ToolDefinitionError,
} from "./core/errors.js";
export type {
  Provider,
  ProviderCallOptions,
  ProviderRequest,
  ProviderStreamEvent,
} from "./core/provider.js";
export { Registration } from "./core/registration.js";
export {
  ContentBlock,
  type JSONSchema,
  Message,
  PendingApproval,
  ProviderResponse,
  RunError,
  RunResult,
  RunStatus,
  StopReason,
  ToolCall,
  ToolResult,
  ToolSchema,
  Usage,
} from "./core/values.js";
export { Agent, type AgentOptions, type ResumeOptions, type RunOptions } from "./engine/agent.js";
export type { PromptProvider } from "./engine/compose-prompt.js";
export { AgentConfig, type ResolvedAgentConfig } from "./engine/config.js";
export { ApprovalDecision, ParkedRun } from "./engine/parked-run.js";
export type { RunEvent } from "./engine/run-events.js";
export { HookEvent } from "./hooks/events.js";
export {
  AgentEndData,
  AgentStartData,
  CheckpointEventData,
  ErrorData,
  HOOK_PAYLOADS,
  type HookPayloads,
  KnowledgeAccessedData,
  LLMRequestData,
  LLMResponseData,
  LoopIterationData,
  SandboxExecData,
  SkillInvokedData,
  ToolCallEndData,
  ToolCallStartData,
} from "./hooks/payloads.js";
export { type HookContext, type HookObserver, HookRegistry } from "./hooks/registry.js";
export {
  Middleware,
  type MiddlewareLike,
  type MiddlewareStage,
  type MiddlewareStages,
} from "./middleware/middleware.js";
export { MiddlewarePipeline } from "./middleware/pipeline.js";
export {
  type PermissionDecision,
  PermissionManager,
  type PermissionManagerOptions,
  type PermissionResolver,
  type PermissionRule,
  type PermissionVerdict,
} from "./permissions/permission-manager.js";
// Real model providers (their SDKs load on the first call)
export { type AnthropicProviderOptions, anthropicProvider } from "./providers/anthropic.js";
export { type OpenAIProviderOptions, openaiProvider } from "./providers/openai.js";
// Durable runtime
export {
  AgentRuntime,
  type AgentRuntimeOptions,
  type RunSummary,
  type StartOptions,
  type SubmitOptions,
} from "./runtime/agent-runtime.js";
export type { DecisionOptions } from "./runtime/approvals.js";
export type {
  BackendStartOptions,
  EnqueueStepOptions,
  JobDelivery,
  JobProcessors,
  LeaseOutcome,
  OpenedRun,
  RunBackend,
  SaveOutcome,
} from "./runtime/backend.js";
export {
  BackendError,
  LeaseLostError,
  RunNotFoundError,
  RuntimeStateError,
  UnknownAgentError,
} from "./runtime/errors.js";
export { type MemoryBackendOptions, memoryBackend } from "./runtime/memory-backend.js";
export { type RedisBackendOptions, redisBackend } from "./runtime/redis-backend.js";
export { RunHandle } from "./runtime/run-handle.js";
export {
  RunRecord,
  RunRecordStatus,
  StepJob,
  StoredDecision,
  ToolJob,
} from "./runtime/schemas.js";
export { ToolRegistry } from "./tools/registry.js";
export {
  type RecoveryPolicy,
  type Tool,
  type ToolContext,
  type ToolHandler,
  type ToolOptions,
  tool,
} from "./tools/tool.js";
