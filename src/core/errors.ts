import type { RunError } from "./values.js";

/** Stable codes: match errors by `code` (they cross processes), not only by `instanceof`. */
export type HarnessErrorCode =
  | "config_invalid"
  | "provider_missing"
  | "provider_failed"
  | "middleware_failed"
  | "middleware_contract"
  | "max_iterations"
  | "run_cancelled"
  | "tool_invalid"
  | "approval_invalid"
  | "run_not_found"
  | "tool_call_not_found"
  | "already_decided"
  | "approval_tampered"
  | "backend_failed"
  | "extension_failed"
  | "replay_diverged"
  | "sandbox_unavailable"
  | "sandbox_failed";

export interface HarnessErrorOptions {
  /** The principal-sequence phase the error happened in. */
  phase?: string;
  cause?: unknown;
}

/** The root of every error harnessx raises. `toJSON()` gives exactly `RunResult.error`. */
export class HarnessError extends Error {
  override name = "HarnessError";
  readonly code: HarnessErrorCode;
  readonly phase: string | undefined;

  constructor(code: HarnessErrorCode, message: string, options: HarnessErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.phase = options.phase;
  }

  toJSON(): RunError {
    return this.phase === undefined
      ? { name: this.name, message: this.message }
      : { name: this.name, message: this.message, phase: this.phase };
  }

  /** True for any harnessx error, even one from another copy of the package. */
  static isHarnessError(value: unknown): value is HarnessError {
    return (
      value instanceof Error &&
      typeof (value as { code?: unknown }).code === "string" &&
      typeof (value as { toJSON?: unknown }).toJSON === "function"
    );
  }
}

/** Options or configuration that do not parse; the message lists `path: problem` per issue. */
export class ConfigError extends HarnessError {
  override name = "ConfigError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("config_invalid", message, options);
  }
}

/** A run was started on an agent that has no provider. */
export class ProviderMissingError extends HarnessError {
  override name = "ProviderMissingError";
  constructor() {
    super(
      "provider_missing",
      "This agent has no provider: pass one as `new Agent({ provider })` before running it.",
      { phase: "provider" },
    );
  }
}

/** The model provider threw or returned something unusable. */
export class ProviderError extends HarnessError {
  override name = "ProviderError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("provider_failed", message, options);
  }
}

/** A middleware stage threw. Never a request for approval. */
export class MiddlewareError extends HarnessError {
  override name = "MiddlewareError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("middleware_failed", message, options);
  }
}

/** A middleware stage broke its contract: a changed id, or a missing or malformed return value. */
export class MiddlewareContractError extends HarnessError {
  override name = "MiddlewareContractError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("middleware_contract", message, options);
  }
}

/** The model kept asking for tools past `config.maxIterations`. */
export class MaxIterationsError extends HarnessError {
  override name = "MaxIterationsError";
  constructor(maxIterations: number) {
    super(
      "max_iterations",
      `The run reached maxIterations (${maxIterations}) and the model still requested tools.`,
      { phase: "afterTool" },
    );
  }
}

/** The run was cancelled through its AbortSignal or the runtime. */
export class RunCancelledError extends HarnessError {
  override name = "RunCancelledError";
  constructor(phase?: string, cause?: unknown) {
    super(
      "run_cancelled",
      "The run was cancelled.",
      phase === undefined ? { cause } : { phase, cause },
    );
  }
}

/** A tool definition is malformed (bad name, duplicate registration). */
export class ToolDefinitionError extends HarnessError {
  override name = "ToolDefinitionError";
  constructor(message: string) {
    super("tool_invalid", message);
  }
}

/** A decision or resume request that cannot be applied; nothing was changed. */
export class ApprovalError extends HarnessError {
  override name = "ApprovalError";
}

/** Wraps anything thrown into a HarnessError carrying the phase it happened in. */
export const toHarnessError = (
  error: unknown,
  fallback: (message: string, options: HarnessErrorOptions) => HarnessError,
  phase: string,
): HarnessError => {
  if (HarnessError.isHarnessError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return fallback(message, { phase, cause: error });
};
