import { jsonProblem } from "../core/json-value.js";

/** Where one value of saved state lives: per agent, extension, key and session. */
export interface ExtensionStateAddress {
  agent: string;
  extension: string;
  key: string;
  sessionId: string;
}

/**
 * Storage for extensions' saved state. Values are JSON data. The agent keeps state in memory
 * (`memoryExtensionStateStore()`); a durable runtime gives it one backed by its store, so that
 * the state travels with a parked run to another process.
 */
export interface ExtensionStateStore {
  /** The value stored at `address`, or `undefined` when nothing was ever set there. */
  get(address: ExtensionStateAddress): Promise<unknown>;
  set(address: ExtensionStateAddress, value: unknown): Promise<void>;
}

/** The key one address is stored under; each part is JSON-quoted, so no two addresses collide. */
export const stateKeyOf = (address: ExtensionStateAddress): string =>
  JSON.stringify([address.agent, address.extension, address.key, address.sessionId]);

/** The session a `stateKeyOf` key belongs to; undefined for a key not made by it. */
export function sessionOfStateKey(stateKey: string): string | undefined {
  try {
    const parts: unknown = JSON.parse(stateKey);
    if (!Array.isArray(parts) || parts.length !== 4) return undefined;
    const sessionId: unknown = parts[3];
    return typeof sessionId === "string" ? sessionId : undefined;
  } catch {
    return undefined;
  }
}

/** A store of saved state that can erase a session's values (`deleteSession`). */
export interface SessionStateStore extends ExtensionStateStore {
  /** Deletes every value saved for `sessionId`; returns how many. */
  deleteSession(sessionId: string): number;
}

/** Saved state in this process's memory: for direct runs. Values are stored as JSON copies. */
export function memoryExtensionStateStore(): SessionStateStore {
  const values = new Map<string, string>();
  return {
    deleteSession(sessionId) {
      let deleted = 0;
      for (const key of [...values.keys()]) {
        if (sessionOfStateKey(key) !== sessionId) continue;
        values.delete(key);
        deleted += 1;
      }
      return deleted;
    },
    async get(address) {
      const stored = values.get(stateKeyOf(address));
      return stored === undefined ? undefined : (JSON.parse(stored) as unknown);
    },
    async set(address, value) {
      const problem = jsonProblem(value);
      if (problem !== undefined)
        throw new TypeError(`Saved state must be JSON data: it ${problem}.`);
      values.set(stateKeyOf(address), JSON.stringify(value));
    },
  };
}
