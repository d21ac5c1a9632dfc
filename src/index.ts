// The public API of harnessx. Names are re-exported one by one; nothing else is public.

export {
  DependencyMissingError,
  type DependencyMissingErrorOptions,
  type OptionalPackage,
} from "./core/dependency-missing.js";
export type { Clock, RuntimeDeps, Timer } from "./core/deps.js";
export {
  ApprovalError,
  ChildRunError,
  ConfigError,
  DepthExceededError,
  HarnessError,
  type HarnessErrorCode,
  type HarnessErrorOptions,
  InputInvalidError,
  InputTooLargeError,
  MaxIterationsError,
  MiddlewareContractError,
  MiddlewareError,
  OutputInvalidError,
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorOptions,
  ProviderMissingError,
  RunCancelledError,
  ToolDefinitionError,
  ToolExecutionError,
  ToolTimeoutError,
} from "./core/errors.js";
export { MAX_JSON_DEPTH } from "./core/json-value.js";
export type {
  Provider,
  ProviderCallOptions,
  ProviderRequest,
  ProviderStreamEvent,
} from "./core/provider.js";
export { Registration } from "./core/registration.js";
export {
  ContentBlock,
  type GivenApproval,
  type JSONSchema,
  type JsonValue,
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
// The dashboard (SPEC §12)
export {
  createDashboard,
  type Dashboard,
  type DashboardOptions,
  type DashboardServer,
} from "./dashboard/create-dashboard.js";
export type { GuessLimit } from "./dashboard/token-guesses.js";
export { Agent, type AgentOptions, type ResumeOptions, type RunOptions } from "./engine/agent.js";
export type { AgentTool, AsToolOptions } from "./engine/as-tool.js";
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
// Skills and knowledge bundles
export { KnowledgeBundleOptions, KnowledgeOptions } from "./features/knowledge/knowledge.js";
export {
  DEFAULT_SEARCH_LIMIT,
  type KnowledgeHit,
  MAX_SEARCH_LIMIT,
} from "./features/knowledge/knowledge-tools.js";
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
export { SkillDefinitionError } from "./features/skills/errors.js";
export { SkillFrontMatter } from "./features/skills/skill-file.js";
export { SkillsOptions } from "./features/skills/skills.js";
export { HookEvent } from "./hooks/events.js";
export {
  AgentEndData,
  AgentStartData,
  CheckpointEventData,
  ErrorData,
  HandoffData,
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
// OpenTelemetry tracing
export { injectTraceContext, withExtractedContext } from "./observability/propagation.js";
export { TRACER_NAME } from "./observability/spans.js";
export {
  type PermissionDecision,
  PermissionManager,
  type PermissionManagerOptions,
  type PermissionResolver,
  type PermissionRule,
  type PermissionVerdict,
} from "./permissions/permission-manager.js";
// Real model providers (their SDKs load on the first call)
export {
  type AiSdkLanguageModel,
  type AiSdkProviderOptions,
  aiSdkProvider,
} from "./providers/ai-sdk.js";
export { type AnthropicProviderOptions, anthropicProvider } from "./providers/anthropic.js";
// MCP tools
export {
  type McpHttpOptions,
  McpServerError,
  type McpStdioOptions,
  type McpTools,
  type McpToolsOptions,
  mcpTools,
} from "./providers/mcp.js";
export { type OpenAIProviderOptions, openaiProvider } from "./providers/openai.js";
export { parseRecording, ReplayDivergenceError, ReplayProvider } from "./providers/replay.js";
export {
  AgentRuntime,
  type AgentRuntimeOptions,
  type DeleteSessionResult,
  type PruneOptions,
  type PruneResult,
  type StartOptions,
  type SubmitOptions,
} from "./runtime/agent-runtime.js";
export type { ApprovalRequestedListener } from "./runtime/approval-notifications.js";
export {
  type ApprovalWebhookOptions,
  verifyApprovalSignature,
} from "./runtime/approval-webhook.js";
export type { DecisionOptions, RespondOptions } from "./runtime/approvals.js";
export type { CancelOptions } from "./runtime/cancel-options.js";
export type { RuntimeLimits } from "./runtime/limits.js";
export { type MemoryBackendOptions, memoryBackend } from "./runtime/memory-backend.js";
export { type RedisBackendOptions, redisBackend } from "./runtime/redis-backend.js";
export { RunHandle } from "./runtime/run-handle.js";
// Durable runtime
export type { ApprovalRequest } from "./store/approval-request.js";
// The run store: list, get and prune (SPEC §8), audit trail, stored versions
export {
  BackendError,
  type BackendErrorCode,
  LeaseLostError,
  RunActiveError,
  RunNotFoundError,
  RuntimeStateError,
  StoreVersionError,
  UnknownAgentError,
} from "./store/errors.js";
export {
  type AgentUsage,
  OVERVIEW_WINDOWS,
  type Overview,
  type OverviewOptions,
  type OverviewQuery,
  type OverviewWindow,
} from "./store/overview.js";
export type { EventPage, EventReadOptions, NumberedEvent } from "./store/run-feeds.js";
export {
  DEFAULT_LIST_LIMIT,
  type ListOptions,
  MAX_LIST_LIMIT,
  type RunPage,
  type RunPosition,
  type RunQuery,
} from "./store/run-query.js";
export {
  RUN_RECORD_VERSION,
  RunRecord,
  RunRecordStatus,
  StepJob,
  StoredDecision,
  ToolJob,
} from "./store/schemas.js";
export { DecisionRecord, RunDetail, RunSummary } from "./store/summary.js";
export { CheckpointRecord, ModelCallRecord, ToolCallRecord } from "./store/timeline.js";
export type { ToolCallRun } from "./store/tool-call-view.js";
export { ToolRegistry } from "./tools/registry.js";
export {
  redactInput,
  redactToolInputs,
  type SecretInputs,
  type SecretPaths,
  secretPathsOf,
} from "./tools/secret-inputs.js";
export {
  type RecoveryPolicy,
  type Tool,
  type ToolContext,
  type ToolHandler,
  type ToolOptions,
  tool,
} from "./tools/tool.js";
