import { AsyncLocalStorage } from "../core/node-builtins.js";

/** The run whose code is executing: how saved state finds its session without being told. */
export interface RunScope {
  runId: string;
  sessionId: string;
}

// Entered only by agents with saved state in use: on Node 20 an active AsyncLocalStorage costs
// every promise a little, so runs that do not need it never enable it.
const storage = new AsyncLocalStorage<RunScope>();

/** Runs `body` as part of the run `scope` (and everything it awaits or schedules). */
export function withinRun<T>(scope: RunScope | undefined, body: () => T): T {
  return scope === undefined ? body() : storage.run(scope, body);
}

/** The run executing now, if any. */
export const currentRun = (): RunScope | undefined => storage.getStore();
