import type { Logger } from "pino";
import type { z } from "zod";
import { systemTimer } from "../core/deadline.js";
import { defaultLogger } from "../core/default-logger.js";
import type { RuntimeDeps } from "../core/deps.js";
import { ApprovalError, ConfigError } from "../core/errors.js";
import { randomUUID } from "../core/node-crypto.js";
import type { Provider } from "../core/provider.js";
import { Registration } from "../core/registration.js";
import type { JsonValue, Message, RunResult } from "../core/values.js";
import type { ExtensionLike } from "../extensions/extension.js";
import { ExtensionManager } from "../extensions/extension-manager.js";
import { createKnowledge, type KnowledgeOptions } from "../features/knowledge/knowledge.js";
import type { RunRecorder } from "../features/recorder/entry.js";
import { sandboxTools } from "../features/sandbox/bash-tool.js";
import type { Sandbox } from "../features/sandbox/sandbox.js";
import { createSkills, type SkillsOptions } from "../features/skills/skills.js";
import type { HookEvent } from "../hooks/events.js";
import type { HookPayloads } from "../hooks/payloads.js";
import { emitHook, HookRegistry } from "../hooks/registry.js";
import { RunCursor } from "../machines/run-cursor.js";
import type { MiddlewareLike } from "../middleware/middleware.js";
import { MiddlewarePipeline } from "../middleware/pipeline.js";
import { requestedModel, traceRun } from "../observability/spans.js";
import { PermissionManager } from "../permissions/permission-manager.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/tool.js";
import { checkAgentOptions } from "./agent-options.js";
import { AgentRunEnv, type RunParts } from "./agent-run-env.js";
import { type AgentTool, type AsToolOptions, agentAsTool, type ChildInput } from "./as-tool.js";
import type { PromptProvider } from "./compose-prompt.js";
import { type AgentConfig, parseAgentConfig, type ResolvedAgentConfig } from "./config.js";
import { drive } from "./drive.js";
import { handoffSwitch } from "./handoff-switch.js";
import { handoffTools } from "./handoffs.js";
import { withOwnSignal } from "./own-signal.js";
import type { ApprovalDecision, ParkedRun } from "./parked-run.js";
import { completeDecisions } from "./person-decisions.js";
import { checkResume } from "./resume-checks.js";
import type { RunEnv } from "./run-env.js";
import type { RunEvent } from "./run-events.js";
import { nextRunFrame, withinRunFrame } from "./run-frame.js";
import { toMessages } from "./run-input.js";
import { startRun } from "./run-lifecycle.js";
import { statusOf } from "./run-result.js";
import { settleRun } from "./settle-run.js";
import { streamRun } from "./stream-run.js";
import { checkOutputSchema } from "./structured-output.js";

/**
 * An agent's config with its structured output typed: `output` is a zod schema whose parsed
 * value is `RunResult.output` (`Agent<TOutput>`).
 */
export type AgentConfigFor<TOutput> = Omit<AgentConfig, "output"> & {
  output?: z.ZodType<TOutput> | undefined;
};

export interface AgentOptions<TOutput = string> {
  /** The model adapter. A run without one fails at once with `ProviderMissingError`. */
  provider?: Provider;
  config?: AgentConfigFor<TOutput>;
  tools?: readonly Tool<unknown>[];
  /** A pipeline to use as `agent.middleware`, or middleware to add in order. */
  middleware?: MiddlewarePipeline | readonly MiddlewareLike[];
  /** A registry to use as `agent.hooks`. */
  hooks?: HookRegistry<Agent>;
  /** @defaultValue a manager that allows every call */
  permissions?: PermissionManager;
  /**
   * Installed at `start()` (a run starts the agent), lower `priority` first, ties in the order
   * given; their middleware follows whatever was added before.
   */
  extensions?: readonly ExtensionLike[];
  /** A `FlightRecorder`: every run's requests, raw responses, raw tool results, decisions, errors. */
  recorder?: RunRecorder;
  /** Adds the `bash` tool, lends the agent's hooks to it if it has none, and is `ctx.sandbox`. */
  sandbox?: Sandbox;
  /** @defaultValue pino on stderr at level `HARNESSX_LOG_LEVEL` or "warn", secret-named fields redacted */
  logger?: Logger;
  /**
   * A secret that keys the hash binding each approval to its run, call and input. Without it
   * the hash detects accidental or naive edits of parked data; with it (the same on every
   * agent that resumes the run) an edit cannot be disguised.
   */
  approvalKey?: string;
  /** Clock and id generator; tests inject their own. */
  deps?: Partial<RuntimeDeps>;
  /** Folders of skills (a SKILL.md each): adds the `skill` and `skill_read` tools and lists them in the system prompt. */
  skills?: SkillsOptions;
  /** Named folders of .md / .txt documents: adds the `knowledge_search` and `knowledge_read` tools. */
  knowledge?: KnowledgeOptions;
  /** MCP connections (`await mcpTools(...)`) closed with the agent; pass their tools in `tools`. */
  mcp?: readonly { close(): Promise<void> }[];
  /**
   * Agents this one may hand the conversation to: each adds a `transfer_to_<name>` tool whose
   * call continues the run (same id and conversation) under that agent. A runtime finds them
   * by `config.name`.
   */
  handoffs?: readonly Agent<unknown>[];
}

export interface RunOptions {
  /** @defaultValue a new UUID */
  sessionId?: string;
  /** @defaultValue a new UUID */
  runId?: string;
  /** Aborting cancels the run; handlers receive the signal. */
  signal?: AbortSignal;
}

export interface ResumeOptions {
  /** A decision per pending tool call id; calls left out stay pending. */
  decisions: Record<string, ApprovalDecision>;
  signal?: AbortSignal;
}

/**
 * An agent: a model, tools, middleware, hooks and a permission policy.
 * @example
 * const agent = new Agent({ provider, tools: [search] });
 * const result = await agent.run("Find harnessx");
 */
export class Agent<out TOutput = string> implements AsyncDisposable {
  readonly config: ResolvedAgentConfig;
  readonly provider: Provider | undefined;
  readonly tools: ToolRegistry;
  readonly middleware: MiddlewarePipeline;
  readonly hooks: HookRegistry<Agent>;
  readonly permissions: PermissionManager;
  readonly logger: Logger;
  readonly sandbox: Sandbox | undefined;
  /** Installed extensions; `install(extension)` adds one now. */
  readonly extensions: ExtensionManager;
  readonly recorder: RunRecorder | undefined;
  readonly #deps: Required<RuntimeDeps>;
  readonly #extensionOptions: readonly ExtensionLike[];
  #starting: Promise<void> | undefined;
  readonly #parked = new Map<string, ParkedRun>();
  // Runs being resumed now: a second resume of one (even from a copy of its data) is refused.
  readonly #resuming = new Set<string>();
  readonly #approvalKey: string | undefined;
  readonly #mcp: readonly { close(): Promise<void> }[];
  /** The handoffs' agents by name, and their agents by tool name. */
  readonly #handoffs: ReadonlyMap<string, Agent<unknown>>;
  readonly #handoffTools: ReadonlyMap<string, string> | undefined;
  #promptProviders: readonly PromptProvider[] = [];
  #started = false;

  constructor(options: AgentOptions<TOutput> = {}) {
    if (typeof options !== "object" || options === null) {
      throw new ConfigError("Agent options must be an object.");
    }
    checkAgentOptions(options);
    this.config = parseAgentConfig(options.config ?? {});
    checkOutputSchema(this.config.output);
    this.provider = options.provider;
    this.tools = new ToolRegistry(options.tools ?? []);
    this.middleware =
      options.middleware instanceof MiddlewarePipeline
        ? options.middleware
        : new MiddlewarePipeline(options.middleware ?? []);
    this.hooks = options.hooks ?? new HookRegistry<Agent>();
    this.permissions = options.permissions ?? new PermissionManager({ default: "allow" });
    this.logger = options.logger ?? defaultLogger();
    this.sandbox = options.sandbox;
    for (const each of sandboxTools<Agent>(options.sandbox, this.#asHookAgent()))
      this.tools.register(each);
    this.#approvalKey = options.approvalKey;
    this.#mcp = options.mcp ?? [];
    this.recorder = options.recorder;
    this.#extensionOptions = options.extensions ?? [];
    this.extensions = new ExtensionManager({
      name: this.config.name,
      logger: this.logger,
      addMiddleware: (middleware) => this.middleware.add(middleware),
      addHook: (event, observer) => this.hooks.on(event, observer),
      addTool: (tool) => this.tools.register(tool),
      addPromptProvider: (provider) => this.addPromptProvider(provider),
    });
    this.#deps = {
      clock: options.deps?.clock ?? { now: () => Date.now() },
      generateId: options.deps?.generateId ?? randomUUID,
      timer: options.deps?.timer ?? systemTimer,
    };
    this.#addFeatures(options);
    const handoffs = options.handoffs ?? [];
    this.#handoffs = new Map(handoffs.map((agent) => [agent.name, agent]));
    const { tools, byTool } = handoffTools(this.name, handoffs);
    for (const each of tools) this.tools.register(each);
    this.#handoffTools = byTool.size === 0 ? undefined : byTool;
  }

  /** The agents this one hands runs to. @internal */
  get handoffAgents(): readonly Agent<unknown>[] {
    return [...this.#handoffs.values()];
  }

  /** Skills and knowledge: their tools and prompt sections, with hooks emitted on this agent. */
  #addFeatures(options: AgentOptions<unknown>): void {
    const emit = <E extends HookEvent>(event: E, data: HookPayloads[E]) =>
      emitHook(
        this.hooks,
        { event, agent: this.#asHookAgent(), data, timestamp: this.#deps.clock.now() },
        this.logger,
      );
    for (const feature of [
      createSkills(options.skills, emit),
      createKnowledge(options.knowledge, emit),
    ]) {
      for (const each of feature.tools) this.tools.register(each);
      if (feature.promptProvider) this.addPromptProvider(feature.promptProvider);
    }
  }

  get name(): string {
    return this.config.name;
  }

  get started(): boolean {
    return this.#started;
  }

  /** Installs the `extensions` option's extensions; a failing one fails start() with nothing installed. */
  async start(): Promise<void> {
    this.#starting ??= this.extensions.installAll(this.#extensionOptions).then(
      () => {
        this.#started = true;
      },
      (error: unknown) => {
        this.#starting = undefined;
        throw error;
      },
    );
    await this.#starting;
  }

  /** Uninstalls every extension (each `cleanup()` runs once). The agent starts again on its next run. */
  async close(): Promise<void> {
    await this.#starting?.catch(() => {});
    this.#starting = undefined;
    this.#started = false;
    await this.extensions.closeAll();
    await Promise.all(this.#mcp.map((connection) => connection.close()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Adds dynamic system context, rendered after `config.systemPrompt` on every request. */
  addPromptProvider(provider: PromptProvider): Registration {
    this.#promptProviders = [...this.#promptProviders, provider];
    return new Registration(() => {
      this.#promptProviders = this.#promptProviders.filter((each) => each !== provider);
    });
  }

  /**
   * This agent as a tool: each call starts a child run of it, whose output is the call's result
   * (a child that fails or is cancelled gives an error result with its code). Direct runs run
   * the child inline; on a runtime the child is a durable run of its own.
   * @example
   * const lead = new Agent({ provider, tools: [researcher.asTool({ description: "Research one topic" })] });
   */
  asTool<Schema extends z.ZodType = typeof ChildInput>(
    options: AsToolOptions<Schema>,
  ): AgentTool<z.output<Schema>> {
    return agentAsTool(this, options);
  }

  /** Runs to completion, failure, cancellation, or an approval wait. */
  async run(input: string | Message[], options: RunOptions = {}): Promise<RunResult<TOutput>> {
    // The output is what `config.output` parsed (so `TOutput`), or the final text without one.
    return (await this.#begin(input, withOwnSignal(options), undefined)) as RunResult<TOutput>;
  }

  /** Runs and yields `RunEvent`s as they happen; the last event is always `result`. */
  runStream(input: string | Message[], options: RunOptions = {}): AsyncIterable<RunEvent<TOutput>> {
    return streamRun(
      (emit, signal) => this.#begin(input, { ...options, signal }, emit),
      options.signal,
    ) as AsyncIterable<RunEvent<TOutput>>;
  }

  /** Applies decisions to a parked run (by id, or as `ParkedRun` data) and continues it. */
  async resume(run: string | ParkedRun, options: ResumeOptions): Promise<RunResult<TOutput>> {
    return (await this.#resume(run, withOwnSignal(options), undefined)) as RunResult<TOutput>;
  }

  /** `resume`, yielding `RunEvent`s as they happen. */
  resumeStream(run: string | ParkedRun, options: ResumeOptions): AsyncIterable<RunEvent<TOutput>> {
    return streamRun(
      (emit, signal) => this.#resume(run, { ...options, signal }, emit),
      options.signal,
    ) as AsyncIterable<RunEvent<TOutput>>;
  }

  // Hooks see the agent as `ctx.agent`; what they may call on it does not depend on its output.
  #asHookAgent(): Agent {
    return this as unknown as Agent;
  }

  /** The parked run `runId` as plain, JSON-serialisable data. */
  parked(runId: string): ParkedRun {
    const found = this.#parked.get(runId);
    if (found === undefined) {
      throw new ApprovalError(
        "run_not_found",
        `Run "${runId}" is not awaiting approval on this agent.`,
      );
    }
    return structuredClone(found);
  }

  /** Ids of the runs parked on this agent. */
  parkedRunIds(): string[] {
    return [...this.#parked.keys()];
  }

  async #begin(
    input: string | Message[],
    options: RunOptions,
    emit: ((event: RunEvent) => void) | undefined,
  ): Promise<RunResult<JsonValue>> {
    const messages = toMessages(input);
    const runId = options.runId ?? this.#deps.generateId();
    const sessionId = options.sessionId ?? this.#deps.generateId();
    if (!this.#started) await this.start();
    const { config, provider } = this;
    const frame = nextRunFrame({ runId, sessionId, maxDepth: config.maxDepth, emit, provider });
    return withinRunFrame(frame, async () => {
      const env = this.runEnv({
        runId,
        sessionId,
        signal: options.signal,
        emit,
        conversation: [...messages],
      });
      const cursor = await startRun(env, {
        runId,
        sessionId,
        input,
        messages,
        maxIterations: this.config.maxIterations,
        agent: this.name,
      });
      return this.#advance(cursor, env);
    });
  }

  async #resume(
    run: string | ParkedRun,
    options: ResumeOptions,
    emit: ((event: RunEvent) => void) | undefined,
  ): Promise<RunResult<JsonValue>> {
    const { runId, parked, checked } = checkResume(run, options.decisions, {
      name: this.name,
      approvalKey: this.#approvalKey,
      parked: this.#parked,
      resuming: this.#resuming,
    });
    // Claimed before any await: a second resume of the same run is refused.
    const wasParkedHere = this.#parked.delete(runId);
    this.#resuming.add(runId);
    try {
      if (!this.#started) await this.start();
      const cursor = RunCursor.restore(parked.snapshot);
      const env = this.runEnv({
        runId: parked.runId,
        sessionId: parked.sessionId,
        signal: options.signal,
        emit,
        conversation: [...parked.messages],
      });
      let decisions: typeof checked;
      try {
        decisions = await completeDecisions(
          env,
          cursor.getSnapshot().context,
          checked,
          this.#deps.clock.now(),
        );
      } catch (error) {
        // A refused edit or answer changes nothing: the run stays parked as it was.
        if (wasParkedHere) this.#parked.set(runId, parked);
        throw error;
      }
      cursor.send({ type: "DECIDED", decisions });
      const frame = nextRunFrame({
        runId: parked.runId,
        sessionId: parked.sessionId,
        maxDepth: this.config.maxDepth,
        emit,
        provider: this.provider,
      });
      return await withinRunFrame(frame, () => this.#advance(cursor, env));
    } finally {
      this.#resuming.delete(runId);
    }
  }

  async #advance(cursor: RunCursor, startEnv: RunEnv): Promise<RunResult<JsonValue>> {
    const { runId, sessionId } = cursor.getSnapshot().context;
    // The environment of the agent the run is under: a handoff moves it to the target's.
    const handoff = handoffSwitch(this as Agent<unknown>, startEnv, { runId, sessionId });
    const { name: agent, provider, config } = this;
    await traceRun(
      {
        agent,
        runId,
        sessionId,
        model: requestedModel(config.model, provider),
        provider: provider?.name,
      },
      () => drive(cursor, startEnv, { switchAgent: handoff.switchAgent }),
      () => {
        const { value, context } = cursor.getSnapshot();
        const status = statusOf(value);
        // The run's totals once: a run parked for approval gets them on its resumption's span.
        const ended = status !== "running" && status !== "awaiting_approval";
        return {
          ...context,
          status,
          usage: ended ? context.usage : undefined,
          iterations: context.iteration,
        };
      },
    );
    return settleRun(
      cursor,
      handoff.current(),
      { name: this.name, now: this.#deps.clock.now(), approvalKey: this.#approvalKey },
      (parked) => this.#parked.set(parked.runId, parked),
    );
  }

  /** The environment a run's stages see, with the middleware and hooks in force now. @internal */
  runEnv(run: RunParts): RunEnv {
    return new AgentRunEnv(
      {
        config: this.config,
        provider: this.provider,
        tools: this.tools,
        pipeline: this.middleware.snapshot(),
        permissions: this.permissions,
        hooks: this.hooks,
        hookAgent: this.#asHookAgent(),
        promptProviders: this.#promptProviders,
        logger: this.logger,
        clock: this.#deps.clock,
        timer: this.#deps.timer,
        sandbox: this.sandbox,
        approvalKey: this.#approvalKey,
        recorder: this.recorder,
        usesSavedState: this.extensions.usesSavedState,
        handoffs: this.#handoffTools,
      },
      run,
    );
  }
}
