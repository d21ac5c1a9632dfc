import type { Logger } from "pino";
import { z } from "zod";
import { ConfigError, loggableError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { Registration } from "../core/registration.js";
import { describeIssues } from "../tools/validate.js";
import { ExtensionError } from "./errors.js";
import type { ExtensionContext, ExtensionLike } from "./extension.js";
import { savedState } from "./saved-state.js";
import { type ExtensionStateStore, memoryExtensionStateStore } from "./state-store.js";

/** What the agent lends its extensions: the context's `add*` methods, made on the agent itself. */
export type ExtensionHost = Pick<
  ExtensionContext,
  "addMiddleware" | "addHook" | "addTool" | "addPromptProvider"
> & { readonly name: string; readonly logger: Logger };

const isFunction = (value: unknown) => typeof value === "function";
/** The shape of an extension (`ExtensionLike`), for validating options. */
export const ExtensionShape = lazySchema(() =>
  z.object({
    name: z.string().min(1),
    priority: z.number().finite().optional(),
    install: z.custom<ExtensionLike["install"]>(isFunction, "must be a function"),
    cleanup: z.custom<() => unknown>(isFunction, "must be a function").optional(),
  }),
);

/** Checks that `value` is an extension; throws a `ConfigError` naming what is wrong otherwise. */
function checkExtension(value: unknown, at: string): ExtensionLike {
  const parsed = ExtensionShape.safeParse(value);
  if (!parsed.success) {
    throw new ConfigError(`${at} is not an extension: ${describeIssues(parsed.error.issues)}`);
  }
  return value as ExtensionLike;
}

/**
 * The handle of an installed extension. `close()` removes everything it added, then runs its
 * `cleanup()` once; it resolves when that is done (a throwing cleanup is logged, not thrown).
 */
export class ExtensionRegistration extends Registration implements AsyncDisposable {
  readonly #uninstalled: { done?: Promise<void> };

  constructor(uninstall: () => Promise<void>) {
    const uninstalled: { done?: Promise<void> } = {};
    super(() => {
      uninstalled.done = uninstall();
    });
    this.#uninstalled = uninstalled;
  }

  // Everything is removed synchronously, as with any Registration, and the promise never
  // rejects: a caller that does not await it loses only the moment cleanup finished.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  override close(): Promise<void> {
    super.close();
    return this.#uninstalled.done ?? Promise.resolve();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

interface Installed {
  extension: ExtensionLike;
  registration: ExtensionRegistration;
}

/**
 * An agent's extensions (`agent.extensions`). Installing one runs its `install` with a context
 * whose additions go to the agent; middleware therefore lands after everything added before
 * it, in installation order. Priority orders installation only.
 */
export class ExtensionManager {
  readonly #host: ExtensionHost;
  #store: ExtensionStateStore;
  #installed: readonly Installed[] = [];
  readonly #installing = new Set<string>();
  #usesSavedState = false;

  constructor(host: ExtensionHost, store: ExtensionStateStore = memoryExtensionStateStore()) {
    this.#host = host;
    this.#store = store;
  }

  /** Names of the installed extensions, in installation order. */
  get names(): string[] {
    return this.#installed.map((each) => each.extension.name);
  }

  /** True once an extension asked for saved state: runs then carry their session in scope. */
  get usesSavedState(): boolean {
    return this.#usesSavedState;
  }

  /**
   * Where saved state lives from now on. A durable runtime passes one backed by its store so
   * that state travels with its runs; the default keeps it in this process's memory.
   */
  useStateStore(store: ExtensionStateStore): void {
    this.#store = store;
  }

  /**
   * Installs `extension` now. A failing `install` removes whatever it had added, runs its
   * `cleanup()`, and rejects with an `ExtensionError`.
   */
  async install(extension: ExtensionLike): Promise<ExtensionRegistration> {
    const checked = checkExtension(extension, "The argument of extensions.install()");
    const name = checked.name;
    if (this.#installing.has(name) || this.names.includes(name)) {
      throw new ExtensionError(
        name,
        `An extension named "${name}" is already installed on agent "${this.#host.name}".`,
      );
    }
    this.#installing.add(name);
    const additions: Registration[] = [];
    let open = true;
    const logger = this.#host.logger.child({ extension: name });
    const track = (add: () => Registration): Registration => {
      if (!open) {
        throw new ExtensionError(name, `Extension "${name}" is uninstalled; it cannot add more.`);
      }
      const registration = add();
      additions.push(registration);
      return registration;
    };
    const host = this.#host;
    const context: ExtensionContext = {
      agentName: host.name,
      logger,
      addMiddleware: (middleware) => track(() => host.addMiddleware(middleware)),
      addHook: (event, observer) => track(() => host.addHook(event, observer)),
      addTool: (tool) => track(() => host.addTool(tool)),
      addPromptProvider: (provider) => track(() => host.addPromptProvider(provider)),
      state: (key, initial) => {
        this.#usesSavedState = true;
        return savedState({
          agent: host.name,
          extension: name,
          key,
          initial,
          store: () => this.#store,
        });
      },
    };
    const uninstall = async () => {
      open = false;
      for (const each of additions.toReversed()) each.close();
      this.#installed = this.#installed.filter((each) => each.extension !== checked);
      try {
        await checked.cleanup?.();
      } catch (error) {
        logger.warn({ err: loggableError(error) }, "extension cleanup threw; ignored");
      }
    };
    try {
      await checked.install(context);
    } catch (error) {
      await uninstall();
      const reason = error instanceof Error ? error.message : String(error);
      throw new ExtensionError(name, `Extension "${name}" failed to install: ${reason}`, {
        cause: error,
      });
    } finally {
      this.#installing.delete(name);
    }
    const registration = new ExtensionRegistration(uninstall);
    this.#installed = [...this.#installed, { extension: checked, registration }];
    return registration;
  }

  /**
   * Installs extensions in priority order (lower first, ties in the order given), all or
   * nothing: when one fails, those installed before it are uninstalled again. @internal
   */
  async installAll(extensions: readonly ExtensionLike[]): Promise<void> {
    const ordered = extensions
      .map((each, index) => checkExtension(each, `extensions[${index}]`))
      .map((extension, index) => ({ extension, index }))
      .sort(
        (a, b) =>
          (a.extension.priority ?? 100) - (b.extension.priority ?? 100) || a.index - b.index,
      );
    const done: ExtensionRegistration[] = [];
    try {
      for (const { extension } of ordered) done.push(await this.install(extension));
    } catch (error) {
      for (const registration of done.toReversed()) await registration.close();
      throw error;
    }
  }

  /** Uninstalls every extension, the last installed first. @internal */
  async closeAll(): Promise<void> {
    for (const each of this.#installed.toReversed()) await each.registration.close();
  }
}
