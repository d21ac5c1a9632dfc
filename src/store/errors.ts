import { HarnessError, type HarnessErrorOptions } from "../core/errors.js";

/** The run store or queue failed, or refused to start (e.g. Redis may evict keys). */
export class BackendError extends HarnessError {
  override name = "BackendError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("backend_failed", message, options);
  }
}

/** A worker's lease on a run was taken over by a newer holder; its writes are refused. */
export class LeaseLostError extends HarnessError {
  override name = "LeaseLostError";
  constructor(runId: string, token: number) {
    super(
      "backend_failed",
      `The lease on run "${runId}" (token ${token}) was lost to a newer holder.`,
    );
  }
}

/** A run was submitted for an agent this runtime does not have. */
export class UnknownAgentError extends HarnessError {
  override name = "UnknownAgentError";
  constructor(agent: string, known: readonly string[]) {
    super(
      "config_invalid",
      `No agent named "${agent}" is registered with this runtime (registered: ${
        known.length === 0 ? "none" : known.map((name) => `"${name}"`).join(", ")
      }).`,
    );
  }
}

/** No run with this id exists in the backend. */
export class RunNotFoundError extends HarnessError {
  override name = "RunNotFoundError";
  constructor(runId: string) {
    super("run_not_found", `No run "${runId}" exists.`);
  }
}

/** The runtime was used before `start()` or after `close()`. */
export class RuntimeStateError extends HarnessError {
  override name = "RuntimeStateError";
  constructor(message: string) {
    super("config_invalid", message);
  }
}

/**
 * A stored run was written by a version of harnessx whose stored shape this one does not
 * read (its `schemaVersion` differs): it is refused, never misread.
 */
export class StoreVersionError extends HarnessError {
  override name = "StoreVersionError";
  readonly found: unknown;
  readonly expected: number;
  constructor(runId: string, found: unknown, expected: number) {
    super(
      "store_version",
      `Run "${runId}" was stored with schemaVersion ${JSON.stringify(found)}; this version of harnessx reads schemaVersion ${expected} (and 2, which it migrates) only.`,
    );
    this.found = found;
    this.expected = expected;
  }
}
