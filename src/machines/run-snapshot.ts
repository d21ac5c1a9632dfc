import type { FinalPhase, Phase, RunContext, RunSnapshot } from "./run-machine.js";

/** The run machine's persisted snapshot (`getPersistedSnapshot`), as plain data. */
export interface PersistedRunSnapshot {
  status: RunSnapshot["status"];
  output: unknown;
  error: unknown;
  value: RunSnapshot["value"];
  historyValue: Record<string, never>;
  context: RunContext;
  children: Record<string, never>;
}

/**
 * `runMachine().getPersistedSnapshot(snapshot)`, for this machine, which spawns no actors and has
 * no history states: without that method's walk of the whole context (the conversation
 * included) in search of actor references, at every save. The context is shared, not copied:
 * XState replaces it on a change and never mutates it.
 */
export function persistedRunSnapshot(snapshot: RunSnapshot): PersistedRunSnapshot {
  const { status, output, error, value, context } = snapshot;
  return { status, output, error, value, historyValue: {}, context, children: {} };
}

/**
 * The effect boundaries (SPEC §8) at which a durable run is persisted: after a provider
 * response (entering `afterLlm`), at `dispatch`, when it parks, after tool results entered the
 * conversation (back at `compose` from `afterTool`), and when it finishes. What runs between
 * two of them is pure work or middleware: after a crash it runs again from the last save.
 */
export function isEffectBoundary(entered: Phase | FinalPhase, left: Phase): boolean {
  switch (entered) {
    case "afterLlm":
    case "awaitingApproval":
    case "dispatch":
    case "done":
    case "failed":
    case "cancelled":
      return true;
    case "compose":
      return left === "afterTool";
    default:
      return false;
  }
}
