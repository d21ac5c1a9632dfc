import { HarnessError, type HarnessErrorOptions } from "../core/errors.js";

/**
 * Why the run store or queue failed: `backend_failed` (it failed, or refused to start, e.g.
 * Redis may evict keys), `backend_unavailable` (Redis did not answer in time), `store_lost`
 * (Redis lost the data this runtime had seen: it restarted empty), `store_full` (Redis refused a
 * write for its `maxmemory`: nothing of that write was stored) or `record_corrupt` (stored data
 * that does not parse, see `record-codec.ts`).
 */
export type BackendErrorCode =
  | "backend_failed"
  | "backend_unavailable"
  | "store_lost"
  | "store_full"
  | "record_corrupt";

export interface BackendErrorOptions extends HarnessErrorOptions {
  /** @defaultValue "backend_failed" */
  code?: BackendErrorCode;
}

/** The run store or queue failed, did not answer, lost its data or holds corrupt data. */
export class BackendError extends HarnessError {
  override name = "BackendError";
  declare readonly code: BackendErrorCode;
  constructor(message: string, options: BackendErrorOptions = {}) {
    const { code = "backend_failed", ...rest } = options;
    super(code, message, rest);
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

/** A run still going was asked to be deleted (`runtime.delete`): cancel it first. */
export class RunActiveError extends HarnessError {
  override name = "RunActiveError";
  constructor(runId: string) {
    super("run_active", `Run "${runId}" is not finished: cancel it before deleting it.`);
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
  /** `shape`: what was stored in another version, the run's record or its summary. */
  constructor(
    runId: string,
    found: unknown,
    expected: number,
    shape: "record" | "summary" = "record",
  ) {
    super(
      "store_version",
      shape === "record"
        ? `Run "${runId}" was stored with schemaVersion ${JSON.stringify(found)}; this version of harnessx reads schemaVersion ${expected} (and 2 and 3, which it migrates) only.`
        : `The summary of run "${runId}" was stored with version ${JSON.stringify(found)}; this version of harnessx reads summary version ${expected} (and 1, the full form) only.`,
    );
    this.found = found;
    this.expected = expected;
  }
}
