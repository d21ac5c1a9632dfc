import { ExtensionError } from "./errors.js";
import type { SavedState } from "./extension.js";
import { currentRun } from "./run-scope.js";
import type { ExtensionStateStore } from "./state-store.js";

interface SavedStateOptions<T> {
  agent: string;
  extension: string;
  key: string;
  initial: T;
  /** The store in force at each access (a runtime may swap the agent's store). */
  store: () => ExtensionStateStore;
}

/** A handle on one key of an extension's saved state; the session comes from the run in scope. */
export function savedState<T>(options: SavedStateOptions<T>): SavedState<T> {
  const { agent, extension, key } = options;
  const initialJson = JSON.stringify(options.initial);
  if (initialJson === undefined) {
    throw new ExtensionError(extension, `The initial value of saved state "${key}" is not JSON.`);
  }
  const address = (sessionId: string | undefined) => {
    const session = sessionId ?? currentRun()?.sessionId;
    if (session === undefined) {
      throw new ExtensionError(
        extension,
        `Saved state "${key}" of extension "${extension}" was used outside a run: pass the session id.`,
      );
    }
    return { agent, extension, key, sessionId: session };
  };
  return {
    async get(sessionId) {
      const stored = await options.store().get(address(sessionId));
      return (stored === undefined ? JSON.parse(initialJson) : stored) as T;
    },
    async set(value, sessionId) {
      await options.store().set(address(sessionId), value);
    },
  };
}
