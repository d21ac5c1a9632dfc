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
// Extensions, the flight recorder and replay
export { ExtensionError } from "./extensions/errors.js";
export {
  Extension,
  type ExtensionContext,
  type ExtensionLike,
  type SavedState,
} from "./extensions/extension.js";
export {
  type ExtensionHost,
  ExtensionManager,
  ExtensionRegistration,
} from "./extensions/extension-manager.js";
export {
  type ExtensionStateAddress,
  type ExtensionStateStore,
  memoryExtensionStateStore,
} from "./extensions/state-store.js";
export {
  RecorderEntry,
  type RecorderEntryType,
  type RunRecorder,
} from "./features/recorder/entry.js";
export { FlightRecorder, type FlightRecorderOptions } from "./features/recorder/flight-recorder.js";
export {
  type MemoryRecorderSinkOptions,
  memoryRecorderSink,
  type RecorderSink,
} from "./features/recorder/recorder-sink.js";
// Sandbox
export {
  type ResolvedSandboxConfig,
  SandboxConfig,
  SandboxLanguage,
  SandboxTier,
} from "./features/sandbox/config.js";
export { SandboxError, SandboxUnavailableError } from "./features/sandbox/errors.js";
export {
  Sandbox,
  type SandboxCommandOptions,
  type SandboxExecuteOptions,
  type SandboxOptions,
  type SandboxResult,
} from "./features/sandbox/sandbox.js";
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
export { parseRecording, ReplayDivergenceError, ReplayProvider } from "./providers/replay.js";
// Durable runtime
export {
  AgentRuntime,
  type AgentRuntimeOptions,
  type RunSummary,
  type StartOptions,
  type SubmitOptions,
} from "./runtime/agent-runtime.js";
export type { DecisionOptions } from "./runtime/approvals.js";
export { type MemoryBackendOptions, memoryBackend } from "./runtime/memory-backend.js";
export { type RedisBackendOptions, redisBackend } from "./runtime/redis-backend.js";
export { RunHandle } from "./runtime/run-handle.js";
export type {
  BackendStartOptions,
  EnqueueStepOptions,
  JobDelivery,
  JobProcessors,
  LeaseOutcome,
  OpenedRun,
  RunBackend,
  SaveOutcome,
} from "./store/backend.js";
export {
  BackendError,
  LeaseLostError,
  RunNotFoundError,
  RuntimeStateError,
  UnknownAgentError,
} from "./store/errors.js";
export {
  RunRecord,
  RunRecordStatus,
  StepJob,
  StoredDecision,
  ToolJob,
} from "./store/schemas.js";
export { ToolRegistry } from "./tools/registry.js";
export {
  type RecoveryPolicy,
  type Tool,
  type ToolContext,
  type ToolHandler,
  type ToolOptions,
  tool,
} from "./tools/tool.js";
