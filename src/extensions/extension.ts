import type { Logger } from "pino";
import type { Registration } from "../core/registration.js";
import type { HookEvent } from "../hooks/events.js";
import type { HookObserver } from "../hooks/registry.js";
import type { MiddlewareLike } from "../middleware/middleware.js";
import type { Tool } from "../tools/tool.js";

/** Supplies dynamic system context for a run (extensions add these). */
export type PromptProvider = (run: {
  runId: string;
  sessionId: string;
}) => string | null | undefined | Promise<string | null | undefined>;

/**
 * A piece of saved state, per session. Inside a run (middleware, hooks, tools, prompt
 * providers) `get()` and `set(value)` address the session of that run; elsewhere pass the
 * session id. Values are JSON data, stored as copies.
 */
export interface SavedState<T> {
  /** The value saved for the session; a copy of `initial` until something is set. */
  get(sessionId?: string): Promise<T>;
  set(value: T, sessionId?: string): Promise<void>;
}

/**
 * What an extension's `install` receives. Everything added through it is removed when the
 * extension is uninstalled (or its install fails), before `cleanup()` runs.
 */
export interface ExtensionContext {
  /** The name of the agent being extended (`config.name`). */
  readonly agentName: string;
  /** The agent's logger, bound to this extension's name. */
  readonly logger: Logger;
  /** Appends middleware to the agent's pipeline (after everything added before it). */
  addMiddleware(middleware: MiddlewareLike): Registration;
  /** Observes a lifecycle event; `ctx.agent` is the agent. */
  addHook<E extends HookEvent>(event: E, observer: HookObserver<E>): Registration;
  addTool(tool: Tool<unknown>): Registration;
  /** Adds dynamic system context, rendered after `config.systemPrompt` on every request. */
  addPromptProvider(provider: PromptProvider): Registration;
  /** Saved state under `key`, per session; `initial` until set. */
  state<T>(key: string, initial: T): SavedState<T>;
}

/** Anything with a name and an `install`; `Extension` is the base class to extend. */
export interface ExtensionLike {
  readonly name: string;
  /** Lower installs first; equal priorities keep the order given. @defaultValue 100 */
  readonly priority?: number;
  install(context: ExtensionContext): unknown;
  /** Runs once on uninstall or agent close, after everything the extension added is removed. */
  cleanup?(): unknown;
}

/**
 * A feature packaged for reuse: middleware, hooks, tools, prompt providers and saved state
 * installed together, removed together. Give a subclass a `priority` (lower installs first,
 * default 100) to order it among the extensions an agent is given.
 * @example
 * class Audit extends Extension {
 *   name = "audit";
 *   async install(ctx: ExtensionContext) {
 *     ctx.addHook(HookEvent.TOOL_CALL_END, (hook) => console.log(hook.data.toolCall.name));
 *   }
 * }
 * new Agent({ extensions: [new Audit()] });
 */
export abstract class Extension implements ExtensionLike {
  abstract readonly name: string;
  abstract install(context: ExtensionContext): Promise<void> | void;
  /** Releases what `install` acquired. The base does nothing. */
  async cleanup(): Promise<void> {}
}
