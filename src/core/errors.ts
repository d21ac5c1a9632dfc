import type { RunError } from "./values.js";

/** Stable codes: match errors by `code` (they cross processes), not only by `instanceof`. */
export type HarnessErrorCode =
  | "config_invalid"
  | "input_invalid"
  | "input_too_large"
  | "provider_missing"
  | "provider_failed"
  | ProviderErrorCode
  | "middleware_failed"
  | "middleware_contract"
  | "max_iterations"
  | "output_invalid"
  | "run_cancelled"
  | "tool_invalid"
  | "tool_failed"
  | "tool_timeout"
  | "approval_invalid"
  | "run_not_found"
  | "run_active"
  | "tool_call_not_found"
  | "already_decided"
  | "approval_tampered"
  | "approval_refused"
  | "approver_repeated"
  | "backend_failed"
  | "record_corrupt"
  | "backend_unavailable"
  | "store_lost"
  | "store_full"
  | "extension_failed"
  | "replay_diverged"
  | "sandbox_unavailable"
  | "sandbox_failed"
  | "store_version"
  | "mcp_failed"
  | "dependency_missing"
  | "depth_exceeded"
  | "child_failed"
  | "internal_error";

/**
 * Who is at fault for an error: `caller` (the code that uses harnessx: its input, options,
 * middleware, extensions, decisions), `model` (the model provider or what the model asked for),
 * `tool` (a tool handler, its sandbox or MCP server), `store` (the run store or queue) or
 * `internal` (harnessx itself: a bug).
 */
export type Fault = "caller" | "model" | "tool" | "store" | "internal";

interface CodeTraits {
  readonly fault: Fault;
  /** Whether a worker's job that threw it may run again (BullMQ retries it) rather than give up at once. */
  readonly jobRetries: boolean;
}

const caller: CodeTraits = { fault: "caller", jobRetries: false };
const model: CodeTraits = { fault: "model", jobRetries: false };
const tool: CodeTraits = { fault: "tool", jobRetries: false };
// A store that failed or did not answer may answer the next try; one that holds data this
// version cannot read, or lost it, will not.
const storeTransient: CodeTraits = { fault: "store", jobRetries: true };
const storeFinal: CodeTraits = { fault: "store", jobRetries: false };

/**
 * Every code's fault and whether a job that threw it is retried: the one table both are read
 * from. A code missing here fails the typecheck.
 */
const CODE_TRAITS: Readonly<Record<HarnessErrorCode, CodeTraits>> = {
  config_invalid: caller,
  input_invalid: caller,
  input_too_large: caller,
  provider_missing: caller,
  provider_failed: model,
  output_truncated: model,
  rate_limited: { fault: "model", jobRetries: true },
  context_too_long: model,
  auth: caller,
  bad_request: model,
  unavailable: { fault: "model", jobRetries: true },
  timeout: { fault: "model", jobRetries: true },
  aborted: caller,
  middleware_failed: caller,
  middleware_contract: caller,
  max_iterations: model,
  // The model's final answer did not match `config.output`, after every retry it was given.
  output_invalid: model,
  run_cancelled: caller,
  tool_invalid: caller,
  tool_failed: tool,
  tool_timeout: tool,
  approval_invalid: caller,
  run_not_found: caller,
  run_active: caller,
  tool_call_not_found: caller,
  already_decided: caller,
  approval_tampered: caller,
  // An edit the policy denies, and a second decision by one person on a quorum call.
  approval_refused: caller,
  approver_repeated: caller,
  backend_failed: storeTransient,
  record_corrupt: storeFinal,
  backend_unavailable: storeTransient,
  store_lost: storeFinal,
  // Redis refused a write for its maxmemory: freeing memory (prune, a bigger maxmemory) lets the
  // same job go on, and giving up would need a write too (the run saved as failed).
  store_full: storeTransient,
  extension_failed: caller,
  replay_diverged: model,
  sandbox_unavailable: tool,
  sandbox_failed: tool,
  store_version: storeFinal,
  mcp_failed: tool,
  dependency_missing: caller,
  depth_exceeded: caller,
  child_failed: tool,
  internal_error: { fault: "internal", jobRetries: false },
};

const traitsOf = (code: string): CodeTraits | undefined =>
  Object.hasOwn(CODE_TRAITS, code) ? CODE_TRAITS[code as HarnessErrorCode] : undefined;

/**
 * Who is at fault for an error with this code; `internal` for a code this version does not
 * know (say, from a newer copy of the package).
 */
export function faultOf(code: string): Fault {
  return traitsOf(code)?.fault ?? "internal";
}

/**
 * Whether a queued job that threw `thrown` may be tried again: read at the worker edge, where
 * a `false` becomes "do not retry". A harnessx error retries only when its code says so; any
 * other throw (a socket error, say) may be passing and retries.
 */
export function jobMayRetry(thrown: unknown): boolean {
  if (!HarnessError.isHarnessError(thrown)) return true;
  return traitsOf(thrown.code)?.jobRetries ?? false;
}

export interface HarnessErrorOptions {
  /** The principal-sequence phase the error happened in. */
  phase?: string;
  cause?: unknown;
}

// A registry symbol: every copy of the package (two versions in one node_modules) marks alike.
const HARNESS_ERROR = Symbol.for("harnessx.error");

/** The root of every error harnessx raises. `toJSON()` gives exactly `RunResult.error`. */
export class HarnessError extends Error {
  static {
    Object.defineProperty(HarnessError.prototype, HARNESS_ERROR, { value: true });
  }

  override name = "HarnessError";
  readonly code: HarnessErrorCode;
  readonly phase: string | undefined;
  /**
   * On a rejected `runtime.submit()`: the id of the run it tried to store, which may have been
   * stored all the same (Redis answered too late). Submit again with `{ runId }` to get that
   * run, or the one run it stores then; never two. Not part of `toJSON()`.
   */
  runId?: string;

  /** Who is at fault (see `Fault`); not part of `toJSON()`, which keeps to `RunResult.error`. */
  get fault(): Fault {
    return faultOf(this.code);
  }

  constructor(code: HarnessErrorCode, message: string, options: HarnessErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.phase = options.phase;
  }

  toJSON(): RunError {
    return this.phase === undefined
      ? { name: this.name, code: this.code, message: this.message }
      : { name: this.name, code: this.code, message: this.message, phase: this.phase };
  }

  /**
   * True for any harnessx error, even one from another copy of the package: recognised by the
   * `Symbol.for("harnessx.error")` marker every copy sets, never by its shape.
   */
  static isHarnessError(value: unknown): value is HarnessError {
    return (
      value instanceof Error &&
      (value as { [HARNESS_ERROR]?: unknown })[HARNESS_ERROR] === true &&
      typeof (value as { code?: unknown }).code === "string"
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

/** The model's final answer did not match `config.output`, after every retry (§14). */
export class OutputInvalidError extends HarnessError {
  override name = "OutputInvalidError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("output_invalid", message, options);
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

/** Why a model call failed, as far as retrying goes (SPEC §11). */
export type ProviderErrorCode =
  | "rate_limited"
  | "context_too_long"
  | "auth"
  | "bad_request"
  | "unavailable"
  | "timeout"
  | "aborted"
  /** The answer hit the token limit inside a tool call's arguments: raise `maxTokens`. */
  | "output_truncated";

const RETRYABLE_PROVIDER_CODES: ReadonlySet<string> = new Set([
  "rate_limited",
  "unavailable",
  "timeout",
]);

export interface ProviderErrorOptions extends HarnessErrorOptions {
  /** @defaultValue "provider_failed" (a provider that failed for a reason it did not classify) */
  code?: ProviderErrorCode | "provider_failed";
  /** Whether trying the same call again can help. @defaultValue true for rate_limited, unavailable and timeout */
  retryable?: boolean;
  /** How long the API asked callers to wait before the next try, when it said. */
  retryAfterMs?: number;
}

/**
 * The model provider threw or returned something unusable. `retryable` and `retryAfterMs` stay on
 * the error object; `toJSON()` keeps to `RunResult.error`. Adapters keep `cause` sanitised: never
 * an SDK error object, which may carry request headers.
 */
export class ProviderError extends HarnessError {
  override name = "ProviderError";
  declare readonly code: ProviderErrorCode | "provider_failed";
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: ProviderErrorOptions = {}) {
    const { code = "provider_failed", retryable, retryAfterMs, ...rest } = options;
    super(code, message, rest);
    this.retryable = retryable ?? RETRYABLE_PROVIDER_CODES.has(code);
    this.retryAfterMs = retryAfterMs;
  }

  override toJSON(): RunError {
    return toRunError(this);
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

/** A call of an agent used as a tool (`agent.asTool`) went deeper than the calling agent's `config.maxDepth`. */
export class DepthExceededError extends HarnessError {
  override name = "DepthExceededError";
  constructor(depth: number, maxDepth: number) {
    super(
      "depth_exceeded",
      `A child run at depth ${depth} is deeper than maxDepth ${maxDepth} (code depth_exceeded).`,
      { phase: "dispatch" },
    );
  }
}

/**
 * A child run (`agent.asTool`) that did not complete: its message names the child's status and
 * error code, and `childCode` keeps the code.
 */
export class ChildRunError extends HarnessError {
  override name = "ChildRunError";
  readonly childRunId: string;
  readonly childCode: string;
  constructor(childRunId: string, agent: string, status: string, error: RunError | null) {
    const code = error?.code ?? status;
    const detail = error === null ? "" : `: ${error.message}`;
    super(
      "child_failed",
      `Child run "${childRunId}" of agent "${agent}" ended ${status} (code ${code})${detail}`,
      { phase: "dispatch" },
    );
    this.childRunId = childRunId;
    this.childCode = code;
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

/** The message of anything thrown, read defensively: always a string, never the object itself. */
export function messageOf(thrown: unknown): string {
  try {
    if (typeof thrown === "string") return thrown;
    if (typeof thrown === "object" && thrown !== null) {
      const message = (thrown as { message?: unknown }).message;
      if (typeof message === "string") return message;
      if (thrown instanceof Error) return "";
    }
    return String(thrown);
  } catch {
    return "(a value that cannot be printed was thrown)";
  }
}

/**
 * Wraps anything thrown into a HarnessError carrying the phase it happened in. A harnessx error
 * (of any copy of the package) is returned as it is; anything else is rebuilt from its message
 * alone, so that no foreign object (an SDK error's request, headers or config) is kept, stored
 * in a run, logged or handed to hooks.
 */
export const toHarnessError = (
  error: unknown,
  fallback: (message: string, options: HarnessErrorOptions) => HarnessError,
  phase: string,
): HarnessError => {
  if (HarnessError.isHarnessError(error)) return error;
  return fallback(messageOf(error), { phase });
};

/**
 * `RunResult.error` for a harnessx error of any copy of the package, read field by field (an
 * older copy's `toJSON` may lack `code`).
 */
export function toRunError(error: HarnessError): RunError {
  const text = (value: unknown, otherwise: string): string =>
    typeof value === "string" ? value : otherwise;
  const runError: RunError = {
    name: text(error.name, "HarnessError"),
    code: text(error.code, "unknown"),
    message: text(error.message, ""),
  };
  if (typeof error.phase === "string") runError.phase = error.phase;
  // A provider error's retry hints, as it gave them (SPEC §1).
  const { retryable, retryAfterMs } = error as { retryable?: unknown; retryAfterMs?: unknown };
  if (typeof retryable === "boolean") runError.retryable = retryable;
  if (typeof retryAfterMs === "number" && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    runError.retryAfterMs = retryAfterMs;
  }
  return runError;
}

/**
 * What a log line may carry of something thrown: a fresh Error with its name, message and stack,
 * nothing else (an SDK error may carry request headers or config).
 */
export function loggableError(thrown: unknown): Error {
  const copy = new Error(messageOf(thrown));
  if (thrown instanceof Error) {
    if (typeof thrown.name === "string") copy.name = thrown.name;
    copy.stack = typeof thrown.stack === "string" ? thrown.stack : "";
  } else {
    copy.stack = "";
  }
  return copy;
}

/**
 * Something failed that no harnessx error names: a bug in harnessx, or a throw from code it
 * calls that it does not classify. Carries the thrown message alone, never the thrown object.
 */
export class InternalError extends HarnessError {
  override name = "InternalError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("internal_error", message, options);
  }
}

/** A run's input is not what `agent.run` accepts: not messages, or not plain JSON data. */
export class InputInvalidError extends HarnessError {
  override name = "InputInvalidError";
  constructor(message: string) {
    super("input_invalid", message);
  }
}

/** A durable run's input is bigger than the runtime's `limits.maxInputBytes`; nothing was stored. */
export class InputTooLargeError extends HarnessError {
  override name = "InputTooLargeError";
  readonly bytes: number;
  readonly maxBytes: number;
  constructor(bytes: number, maxBytes: number) {
    super(
      "input_too_large",
      `The run input is ${bytes} bytes, over the runtime's limits.maxInputBytes (${maxBytes}).`,
    );
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

/** A tool handler threw: what the `ERROR` hook reports (the call gets an error result; the run goes on). */
export class ToolExecutionError extends HarnessError {
  override name = "ToolExecutionError";
  constructor(message: string, options?: HarnessErrorOptions) {
    super("tool_failed", message, options);
  }
}

/** A tool handler ran past its `timeoutMs`: its signal is aborted, the call gets an error result, the run goes on. */
export class ToolTimeoutError extends HarnessError {
  override name = "ToolTimeoutError";
  constructor(toolName: string, timeoutMs: number, options?: HarnessErrorOptions) {
    super("tool_timeout", `Tool "${toolName}" timed out after ${timeoutMs} ms.`, options);
  }
}
