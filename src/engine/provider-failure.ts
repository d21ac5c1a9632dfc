import type { Logger } from "pino";
import { type HarnessError, ProviderError, toRunError } from "../core/errors.js";
import { scrubCredentials } from "../core/scrub-credentials.js";

/**
 * A provider's failure as the run keeps it: its message scrubbed of anything credential-shaped
 * (a custom provider's message is stored, logged and shown word for word otherwise), its code,
 * phase and retry hints kept. A rebuilt error drops the cause, which may repeat the message.
 */
export function scrubbedProviderError(error: HarnessError): HarnessError {
  const message = scrubCredentials(error.message);
  if (message === error.message) return error;
  const { code, phase, retryable, retryAfterMs } = toRunError(error);
  return new ProviderError(message, {
    code: code as ProviderError["code"],
    phase: phase ?? "provider",
    ...(retryable === undefined ? {} : { retryable }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** The one `warn` line of a provider failure: its code, agent and run id, never the error object. */
export function logProviderFailure(
  logger: Logger,
  failure: HarnessError,
  details: { agent: string; runId: string; provider: string },
): void {
  const { code, message, retryable, retryAfterMs } = toRunError(failure);
  // A run's child logger already names the run: the line says it once.
  const { runId, ...rest } = details;
  const named = logger.bindings().runId === runId;
  logger.warn(
    { ...rest, ...(named ? {} : { runId }), code, retryable, retryAfterMs, errorMessage: message },
    "provider call failed",
  );
}
