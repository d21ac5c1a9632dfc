import { statusOf } from "../engine/run-result.js";
import type { FinalPhase, Phase, RunSnapshot } from "../machines/run-machine.js";

/** Where a step left the run, for its span: the run's totals only on the step that ends it. */
export function spanOutcome({ value, context }: RunSnapshot) {
  const status = statusOf(value as Phase | FinalPhase);
  return {
    status,
    error: context.error,
    // The run's totals once, on the step that ends it (SPEC §13).
    usage: status === "running" || status === "awaiting_approval" ? undefined : context.usage,
    iterations: context.iteration,
  };
}
