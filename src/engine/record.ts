import type { RecorderEntry } from "../features/recorder/entry.js";
import type { CallState, RunContext } from "../machines/run-machine.js";
import type { RunEnv } from "./run-env.js";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An entry as a stage describes it; the run, iteration and time are filled in here. */
export type StageEntry = DistributiveOmit<RecorderEntry, "runId" | "iteration" | "at">;

/**
 * Hands entries to the run's flight recorder, if it has one. A recorder that fails loses the
 * entry, never the run: the failure is logged with the entry's type only, never its data.
 */
export async function record(
  env: RunEnv,
  context: RunContext,
  ...entries: StageEntry[]
): Promise<void> {
  const recorder = env.recorder;
  if (recorder === undefined) return;
  for (const entry of entries) {
    try {
      await recorder.record({
        ...entry,
        runId: context.runId,
        iteration: context.iteration,
        at: env.clock.now(),
      } as RecorderEntry);
    } catch (error) {
      env.logger.warn(
        { entryType: entry.type, reason: error instanceof Error ? error.name : typeof error },
        "the flight recorder failed; entry lost",
      );
    }
  }
}

const DECISION_OF = {
  allowed: "allow",
  approved: "allow",
  denied: "deny",
  rejected: "deny",
  asked: "ask",
  invalid: "invalid",
} as const;

/** Decision entries for calls whose status `source` set (all calls when `before` is absent). */
export function decisionEntries(
  calls: readonly CallState[],
  source: "policy" | "recheck" | "person",
  before?: readonly CallState[],
): StageEntry[] {
  return calls
    .filter((state, index) => before === undefined || before[index]?.status !== state.status)
    .map((state) => ({
      type: "decision",
      toolCallId: state.call.id,
      name: state.call.name,
      decision: DECISION_OF[state.status],
      source,
      reason: state.reason,
      ...(state.decidedBy === undefined ? {} : { by: state.decidedBy }),
    }));
}
