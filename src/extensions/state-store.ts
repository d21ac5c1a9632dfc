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

/** Saved state in this process's memory: for direct runs. Values are stored as JSON copies. */
export function memoryExtensionStateStore(): ExtensionStateStore {
  const values = new Map<string, string>();
  return {
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
