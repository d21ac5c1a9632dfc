import { HarnessError, type HarnessErrorOptions } from "../../core/errors.js";

/**
 * The `bubblewrap` tier was asked for but `bwrap` is missing or cannot make its namespaces
 * here. Never answered by quietly running with fewer protections.
 */
export class SandboxUnavailableError extends HarnessError {
  override name = "SandboxUnavailableError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("sandbox_unavailable", message, options);
  }
}

/** The sandbox could not start the program (no interpreter on its PATH, no work folder). */
export class SandboxError extends HarnessError {
  override name = "SandboxError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("sandbox_failed", message, options);
  }
}
