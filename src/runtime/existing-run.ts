import { HarnessError, InputInvalidError } from "../core/errors.js";
import type { EnqueueStepOptions, RunBackend } from "../store/backend.js";
import { BackendError } from "../store/errors.js";

/**
 * A submit found its run stored already: refused when the run is another agent's; a run still
 * `queued` is stepped (a wake-up, harmless twice), in case the submit that stored it lost its
 * first step.
 */
export async function wakeExisting(
  backend: RunBackend,
  runId: string,
  agentName: string,
  step: EnqueueStepOptions,
): Promise<void> {
  const existing = await backend.loadRun(runId);
  if (existing === undefined) {
    throw new BackendError(`Run "${runId}" was reported to exist but cannot be read.`);
  }
  if (existing.agent !== agentName) {
    throw new InputInvalidError(
      `A run "${runId}" of agent "${existing.agent}" exists already: a runId names one run, so it cannot be submitted for agent "${agentName}".`,
    );
  }
  if (existing.status === "queued") await backend.enqueueStep(runId, step);
}

/**
 * A rejected submit's error with the run id it tried (`error.runId`); an error that is not
 * harnessx's (none should reach here) is wrapped in a `BackendError` that carries it.
 */
export function withRunId(error: unknown, runId: string): HarnessError {
  const coded = HarnessError.isHarnessError(error)
    ? error
    : new BackendError(`Submitting run "${runId}" failed: ${String(error)}`, { cause: error });
  coded.runId = runId;
  return coded;
}
