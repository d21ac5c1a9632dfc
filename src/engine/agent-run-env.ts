import type { Logger } from "pino";
import type { Clock, Timer } from "../core/deps.js";
import type { Provider } from "../core/provider.js";
import type { Message } from "../core/values.js";
import { unabortableSignal } from "../core/when-aborted.js";
import { type RunScope, withinRun } from "../extensions/run-scope.js";
import type { RunRecorder } from "../features/recorder/entry.js";
import type { Sandbox } from "../features/sandbox/sandbox.js";
import type { HookEvent } from "../hooks/events.js";
import type { HookPayloads } from "../hooks/payloads.js";
import { emitHook, type HookRegistry } from "../hooks/registry.js";
import type { PipelineSnapshot } from "../middleware/pipeline.js";
import type { PermissionManager } from "../permissions/permission-manager.js";
import type { ToolRegistry } from "../tools/registry.js";
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from "../tools/result-limit.js";
import type { PromptProvider } from "./compose-prompt.js";
import type { ResolvedAgentConfig } from "./config.js";
import type { ProviderGate } from "./provider-gate.js";
import type { HookSink, RunEnv } from "./run-env.js";
import type { RunEvent } from "./run-events.js";

/** What an agent lends the environment of each of its runs (`Agent.runEnv`). */
export interface AgentParts<A> {
  config: ResolvedAgentConfig;
  provider: Provider | undefined;
  tools: ToolRegistry;
  pipeline: PipelineSnapshot;
  permissions: PermissionManager;
  hooks: HookRegistry<A>;
  /** The agent as hook observers see it (`ctx.agent`). */
  hookAgent: A;
  promptProviders: readonly PromptProvider[];
  /** The agent's logger: the run's own is its child. */
  logger: Logger;
  clock: Clock;
  timer: Timer;
  sandbox: Sandbox | undefined;
  approvalKey: string | undefined;
  recorder: RunRecorder | undefined;
  /** Whether extensions use saved state: then the stages run within the run's scope. */
  usesSavedState: boolean;
  handoffs: ReadonlyMap<string, string> | undefined;
}

/** What a run brings to its environment. */
export interface RunParts {
  runId: string;
  sessionId: string;
  signal: AbortSignal | undefined;
  emit: ((event: RunEvent) => void) | undefined;
  /**
   * The run's conversation so far (`RunEnv.conversation`): appended to, never copied. None
   * for an environment that runs no machine (a tool job).
   */
  conversation?: Message[] | undefined;
  /** A durable runtime's limits; direct runs keep the defaults. */
  limits?: ToolLimits | undefined;
  /** A durable runtime's agents: whether it knows one by name (handoffs). */
  agentKnown?: ((name: string) => boolean) | undefined;
}

/**
 * A run's environment as an agent makes it. A class, not an object literal: a durable run held
 * at its model call keeps its environment alive, and a literal with the lazy logger's getter
 * among 20 fields was a dictionary-mode object (1.6 KB of properties) with a closure per hook
 * method; here the fields sit in the object and the methods on the prototype.
 */
export class AgentRunEnv<A> implements RunEnv {
  conversation: Message[];
  config: ResolvedAgentConfig;
  provider: Provider | undefined;
  tools: ToolRegistry;
  pipeline: PipelineSnapshot;
  permissions: PermissionManager;
  hooks: HookSink;
  promptProviders: readonly PromptProvider[];
  clock: Clock;
  timer: Timer;
  signal: AbortSignal;
  stream: boolean;
  emit: ((event: RunEvent) => void) | undefined;
  sandbox: Sandbox | undefined;
  approvalKey: string | undefined;
  recorder: RunRecorder | undefined;
  runScope: RunScope | undefined;
  limits: ToolLimits;
  providerGate: ProviderGate | undefined = undefined;
  handoffs: ReadonlyMap<string, string> | undefined;
  agentKnown: ((name: string) => boolean) | undefined;
  readonly #agentLogger: Logger;
  readonly #runId: string;
  readonly #sessionId: string;
  #logger: Logger | undefined;

  constructor(agent: AgentParts<A>, run: RunParts) {
    this.conversation = run.conversation ?? [];
    this.config = agent.config;
    this.provider = agent.provider;
    this.tools = agent.tools;
    this.pipeline = agent.pipeline;
    this.permissions = agent.permissions;
    this.promptProviders = agent.promptProviders;
    this.clock = agent.clock;
    this.timer = agent.timer;
    // Callers give a signal of the run's own (see `withOwnSignal`), or none.
    this.signal = run.signal ?? unabortableSignal();
    this.stream = run.emit !== undefined;
    this.emit = run.emit;
    this.sandbox = agent.sandbox;
    this.approvalKey = agent.approvalKey;
    this.recorder = agent.recorder;
    this.runScope = agent.usesSavedState
      ? { runId: run.runId, sessionId: run.sessionId }
      : undefined;
    this.limits = run.limits ?? DEFAULT_TOOL_LIMITS;
    this.handoffs = agent.handoffs;
    this.agentKnown = run.agentKnown;
    this.#agentLogger = agent.logger;
    this.#runId = run.runId;
    this.#sessionId = run.sessionId;
    this.hooks = new RunHooks(agent.hooks, agent.hookAgent, this);
  }

  /**
   * The run's child logger (its lines name the run), made on its first line: most runs log
   * nothing, and a durable run held at its model call would keep one alive while it waits.
   */
  get logger(): Logger {
    this.#logger ??= this.#agentLogger.child({ runId: this.#runId, sessionId: this.#sessionId });
    return this.#logger;
  }
}

/** A run's hook events: to the agent's observers, with the agent as `ctx.agent`. */
class RunHooks<A> implements HookSink {
  readonly #registry: HookRegistry<A>;
  readonly #agent: A;
  readonly #env: AgentRunEnv<A>;

  constructor(registry: HookRegistry<A>, agent: A, env: AgentRunEnv<A>) {
    this.#registry = registry;
    this.#agent = agent;
    this.#env = env;
  }

  has(event: HookEvent): boolean {
    return this.#registry.has(event);
  }

  emit<E extends HookEvent>(event: E, data: HookPayloads[E]): Promise<void> {
    const env = this.#env;
    const context = { event, agent: this.#agent, data, timestamp: env.clock.now() };
    return withinRun(env.runScope, () => emitHook(this.#registry, context, () => env.logger));
  }
}
