import type { Logger } from "pino";
import type { Clock, Timer } from "../core/deps.js";
import type { Provider } from "../core/provider.js";
import type { Message } from "../core/values.js";
import type { RunScope } from "../extensions/run-scope.js";
import type { RunRecorder } from "../features/recorder/entry.js";
import type { Sandbox } from "../features/sandbox/sandbox.js";
import type { HookEvent } from "../hooks/events.js";
import type { HookPayloads } from "../hooks/payloads.js";
import type { PipelineSnapshot } from "../middleware/pipeline.js";
import type { PermissionManager } from "../permissions/permission-manager.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { ToolLimits } from "../tools/result-limit.js";
import type { PromptProvider } from "./compose-prompt.js";
import type { ResolvedAgentConfig } from "./config.js";
import type { ProviderGate } from "./provider-gate.js";
import type { RunEvent } from "./run-events.js";

/** Where a run's hook events go: the agent's observers, with the agent as `ctx.agent`. */
export interface HookSink {
  has(event: HookEvent): boolean;
  emit<E extends HookEvent>(event: E, data: HookPayloads[E]): Promise<void>;
}

/** Everything the stages of one run need; built once per run (or resumed segment). */
export interface RunEnv {
  /**
   * The run's conversation, its append-only log in this process: the input's messages, then
   * what the drive loop appends as the machine counts it (`messageAddedBy`). Never rewritten.
   */
  conversation: Message[];
  config: ResolvedAgentConfig;
  provider: Provider | undefined;
  tools: ToolRegistry;
  pipeline: PipelineSnapshot;
  permissions: PermissionManager;
  hooks: HookSink;
  promptProviders: readonly PromptProvider[];
  logger: Logger;
  clock: Clock;
  /** Times tool handlers and provider calls out. */
  timer: Timer;
  signal: AbortSignal;
  /** True for `runStream`: the provider is asked to stream. */
  stream: boolean;
  /** Receives stream events; absent for `run()`. */
  emit: ((event: RunEvent) => void) | undefined;
  sandbox: Sandbox | undefined;
  /** Keys the hashes that bind approvals to calls (see `AgentOptions.approvalKey`). */
  approvalKey: string | undefined;
  /** The agent's flight recorder, called at each recording point. */
  recorder?: RunRecorder | undefined;
  /** Set when extensions use saved state: stages run within this run's scope. */
  runScope?: RunScope | undefined;
  /** The size limits of tool inputs and results. @defaultValue `DEFAULT_TOOL_LIMITS` (1 MB each) */
  limits?: ToolLimits | undefined;
  /** Set by a durable runtime: shared rate limits around each model call. */
  providerGate?: ProviderGate | undefined;
  /** The agent's handoffs: the agent each `transfer_to_<name>` tool hands the run to. */
  handoffs?: ReadonlyMap<string, string> | undefined;
  /**
   * Set by a durable runtime: whether it can run an agent of this name (a handoff to one it
   * cannot is refused with an error result). Direct runs hand off to the agents given.
   */
  agentKnown?: ((name: string) => boolean) | undefined;
}

/**
 * Emits a hook event, skipping all work when nobody observes it: then it returns nothing to
 * wait for rather than a promise (stages emit several events an iteration, most unobserved),
 * and a stage awaits only what it returns (`if (hooked !== undefined) await hooked`): an
 * `await` of nothing still costs a turn of the microtask queue.
 */
export function notify<E extends HookEvent>(
  env: RunEnv,
  event: E,
  data: () => HookPayloads[E],
): Promise<void> | undefined {
  return env.hooks.has(event) ? env.hooks.emit(event, data()) : undefined;
}
