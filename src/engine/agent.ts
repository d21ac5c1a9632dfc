import type { Logger } from "pino";
import { systemTimer } from "../core/deadline.js";
import { defaultLogger } from "../core/default-logger.js";
import type { RuntimeDeps } from "../core/deps.js";
import { ApprovalError, ConfigError } from "../core/errors.js";
import { randomUUID } from "../core/node-crypto.js";
import type { Provider } from "../core/provider.js";
import { Registration } from "../core/registration.js";
import type { Message, RunResult } from "../core/values.js";
import { unabortableSignal } from "../core/when-aborted.js";
import type { ExtensionLike } from "../extensions/extension.js";
import { ExtensionManager } from "../extensions/extension-manager.js";
import { withinRun } from "../extensions/run-scope.js";
import { createKnowledge, type KnowledgeOptions } from "../features/knowledge/knowledge.js";
import type { RunRecorder } from "../features/recorder/entry.js";
import { sandboxTools } from "../features/sandbox/bash-tool.js";
import type { Sandbox } from "../features/sandbox/sandbox.js";
import { createSkills, type SkillsOptions } from "../features/skills/skills.js";
import type { HookEvent } from "../hooks/events.js";
import type { HookPayloads } from "../hooks/payloads.js";
import { emitHook, HookRegistry } from "../hooks/registry.js";
import type { MiddlewareLike } from "../middleware/middleware.js";
import { MiddlewarePipeline } from "../middleware/pipeline.js";
import { requestedModel, traceRun } from "../observability/spans.js";
import { PermissionManager } from "../permissions/permission-manager.js";
import { ToolRegistry } from "../tools/registry.js";
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from "../tools/result-limit.js";
import type { Tool } from "../tools/tool.js";
import { checkAgentOptions } from "./agent-options.js";
import type { PromptProvider } from "./compose-prompt.js";
import { type AgentConfig, parseAgentConfig, type ResolvedAgentConfig } from "./config.js";
import { drive, type RunActor, restoreRunActor } from "./drive.js";
import { checkDecisions, parkRun, parseParked } from "./park-run.js";
import type { ApprovalDecision, ParkedRun } from "./parked-run.js";
import type { RunEnv } from "./run-env.js";
import type { RunEvent } from "./run-events.js";
import { toMessages } from "./run-input.js";
import { finishRun, startRun } from "./run-lifecycle.js";
import { statusOf, toRunResult } from "./run-result.js";
import { streamRun } from "./stream-run.js";

export interface AgentOptions {
  /** The model adapter. A run without one fails at once with `ProviderMissingError`. */
  provider?: Provider;
  config?: AgentConfig;
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
export class Agent implements AsyncDisposable {
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
  #promptProviders: readonly PromptProvider[] = [];
  #started = false;

  constructor(options: AgentOptions = {}) {
    if (typeof options !== "object" || options === null) {
      throw new ConfigError("Agent options must be an object.");
    }
    checkAgentOptions(options);
    this.config = parseAgentConfig(options.config ?? {});
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
    for (const each of sandboxTools<Agent>(options.sandbox, this)) this.tools.register(each);
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
  }

  /** Skills and knowledge: their tools and prompt sections, with hooks emitted on this agent. */
  #addFeatures(options: AgentOptions): void {
    const emit = <E extends HookEvent>(event: E, data: HookPayloads[E]) =>
      emitHook(
        this.hooks,
        { event, agent: this, data, timestamp: this.#deps.clock.now() },
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

  /** Runs to completion, failure, cancellation, or an approval wait. */
  async run(input: string | Message[], options: RunOptions = {}): Promise<RunResult> {
    return this.#begin(input, withOwnSignal(options), undefined);
  }

  /** Runs and yields `RunEvent`s as they happen; the last event is always `result`. */
  runStream(input: string | Message[], options: RunOptions = {}): AsyncIterable<RunEvent> {
    return streamRun(
      (emit, signal) => this.#begin(input, { ...options, signal }, emit),
      options.signal,
    );
  }

  /** Applies decisions to a parked run (by id, or as `ParkedRun` data) and continues it. */
  async resume(run: string | ParkedRun, options: ResumeOptions): Promise<RunResult> {
    return this.#resume(run, withOwnSignal(options), undefined);
  }

  /** `resume`, yielding `RunEvent`s as they happen. */
  resumeStream(run: string | ParkedRun, options: ResumeOptions): AsyncIterable<RunEvent> {
    return streamRun(
      (emit, signal) => this.#resume(run, { ...options, signal }, emit),
      options.signal,
    );
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
  ): Promise<RunResult> {
    const messages = toMessages(input);
    const runId = options.runId ?? this.#deps.generateId();
    const sessionId = options.sessionId ?? this.#deps.generateId();
    if (!this.#started) await this.start();
    const env = this.runEnv({ runId, sessionId, signal: options.signal, emit });
    const actor = await startRun(env, {
      runId,
      sessionId,
      input,
      messages,
      maxIterations: this.config.maxIterations,
    });
    return this.#advance(actor, env);
  }

  async #resume(
    run: string | ParkedRun,
    options: ResumeOptions,
    emit: ((event: RunEvent) => void) | undefined,
  ): Promise<RunResult> {
    const given = typeof run === "string" ? undefined : parseParked(run);
    const runId = given?.runId ?? (run as string);
    if (this.#resuming.has(runId)) {
      throw new ApprovalError("already_decided", `Run "${runId}" is being resumed already.`);
    }
    // A copy is checked as given (tampering), then what this agent parked itself, if anything,
    // is authoritative: a stale copy cannot replay a decision already applied here.
    if (given !== undefined) checkDecisions(given, options.decisions, this.#approvalKey);
    const parked = this.#parked.get(runId) ?? given;
    if (parked === undefined) {
      throw new ApprovalError(
        "run_not_found",
        `Run "${runId}" is not awaiting approval on this agent.`,
      );
    }
    if (parked.agent !== this.name) {
      throw new ApprovalError(
        "approval_invalid",
        `Run "${runId}" was parked by agent "${parked.agent}", not "${this.name}".`,
      );
    }
    const decisions = checkDecisions(parked, options.decisions, this.#approvalKey);
    // Claimed before any await: a second resume of the same run is refused.
    this.#parked.delete(runId);
    this.#resuming.add(runId);
    try {
      if (!this.#started) await this.start();
      const actor = restoreRunActor(parked.snapshot);
      const env = this.runEnv({
        runId: parked.runId,
        sessionId: parked.sessionId,
        signal: options.signal,
        emit,
      });
      actor.send({ type: "DECIDED", decisions });
      return await this.#advance(actor, env);
    } finally {
      this.#resuming.delete(runId);
    }
  }

  async #advance(actor: RunActor, env: RunEnv): Promise<RunResult> {
    const { runId, sessionId } = actor.getSnapshot().context;
    const { name: agent, provider, config } = this;
    await traceRun(
      {
        agent,
        runId,
        sessionId,
        model: requestedModel(config.model, provider),
        provider: provider?.name,
      },
      () => drive(actor, env),
      () => {
        const { value, context } = actor.getSnapshot();
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
    const snapshot = actor.getSnapshot();
    const context = snapshot.context;
    const parked =
      snapshot.value === "awaitingApproval"
        ? parkRun(context, actor, {
            name: this.name,
            now: this.#deps.clock.now(),
            approvalKey: this.#approvalKey,
          })
        : undefined;
    actor.stop();
    if (parked !== undefined) {
      const result = toRunResult(context, "awaiting_approval");
      this.#parked.set(context.runId, parked);
      env.emit?.({ type: "approval_required", pending: result.pending });
      return result;
    }
    const status =
      snapshot.value === "done"
        ? "completed"
        : snapshot.value === "cancelled"
          ? "cancelled"
          : "failed";
    const result = toRunResult(context, status);
    await finishRun(env, result);
    return result;
  }

  /** The environment a run's stages see, with the middleware and hooks in force now. @internal */
  runEnv(run: {
    runId: string;
    sessionId: string;
    signal: AbortSignal | undefined;
    emit: ((event: RunEvent) => void) | undefined;
    /** A durable runtime's limits; direct runs keep the defaults. */
    limits?: ToolLimits | undefined;
  }): RunEnv {
    const logger = this.logger.child({ runId: run.runId, sessionId: run.sessionId });
    const clock = this.#deps.clock;
    const runScope = this.extensions.usesSavedState
      ? { runId: run.runId, sessionId: run.sessionId }
      : undefined;
    return {
      config: this.config,
      provider: this.provider,
      tools: this.tools,
      pipeline: this.middleware.snapshot(),
      permissions: this.permissions,
      hooks: {
        has: (event) => this.hooks.has(event),
        emit: (event, data) =>
          withinRun(runScope, () =>
            emitHook(this.hooks, { event, agent: this, data, timestamp: clock.now() }, logger),
          ),
      },
      promptProviders: this.#promptProviders,
      logger,
      clock,
      timer: this.#deps.timer,
      // Callers give a signal of the run's own (see `withOwnSignal`), or none.
      signal: run.signal ?? unabortableSignal(),
      stream: run.emit !== undefined,
      emit: run.emit,
      sandbox: this.sandbox,
      approvalKey: this.#approvalKey,
      recorder: this.recorder,
      runScope,
      limits: run.limits ?? DEFAULT_TOOL_LIMITS,
    };
  }
}

/**
 * A signal of the run's own that follows the caller's, whatever the caller's lives for: what
 * hangs on it (the deadlines' links to the signals they handed out) goes with the run.
 * (`runStream` makes one per run already; a durable step has its own.)
 */
const withOwnSignal = <O extends { signal?: AbortSignal }>(options: O): O =>
  options.signal === undefined
    ? options
    : { ...options, signal: AbortSignal.any([options.signal]) };
