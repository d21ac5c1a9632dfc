import { ProviderMissingError } from "../core/errors.js";
import type { Message, RunResult } from "../core/values.js";
import { HookEvent } from "../hooks/events.js";
import { RunCursor } from "../machines/run-cursor.js";
import type { CallState } from "../machines/run-machine.js";
import { approvalHash } from "../permissions/input-hash.js";
import { notify, type RunEnv } from "./run-env.js";

// The start and end of one run, and the binding of a person's decision to what was asked:
// shared by direct runs (`Agent`) and durable runs (the run-step worker), so both behave alike.

export interface RunStart {
  runId: string;
  sessionId: string;
  /** The input as given (a string stays a string): what `AGENT_START` tells its observers. */
  input: string | Message[];
  messages: Message[];
  maxIterations: number;
  /** The agent the run starts under. */
  agent: string;
}

/**
 * Starts a run: `AGENT_START`, then the machine's initial snapshot at `compose`; a run without
 * a provider fails at once with `ProviderMissingError`.
 */
export async function startRun(env: RunEnv, start: RunStart): Promise<RunCursor> {
  const { runId, sessionId, input, messages, maxIterations, agent } = start;
  await notify(env, HookEvent.AGENT_START, () => ({ runId, sessionId, input }));
  const cursor = RunCursor.start({
    runId,
    sessionId,
    messageCount: messages.length,
    maxIterations,
    agent,
  });
  if (env.provider === undefined) {
    cursor.send({ type: "FAIL", error: new ProviderMissingError().toJSON() });
  }
  return cursor;
}

/** Tells the hooks a run ended: `ERROR` for a failure, then `AGENT_END` (never for a wait). */
export async function finishRun(env: RunEnv, result: RunResult): Promise<void> {
  const { error } = result;
  if (result.status === "failed" && error !== null) {
    await notify(env, HookEvent.ERROR, () => ({
      runId: result.runId,
      error,
      phase: error.phase ?? "run",
    }));
  }
  await notify(env, HookEvent.AGENT_END, () => ({ result }));
}

/**
 * True when a decision bound to `decidedHash` (the hash the person saw; none when the store
 * kept none) applies to `state`: it still waits, and its stored call still hashes to what was
 * asked. An edit of the pending input between the question and the answer fails this.
 */
export function decisionApplies(
  runId: string,
  state: CallState,
  decidedHash: string | undefined,
  approvalKey: string | undefined,
): boolean {
  return (
    state.status === "asked" &&
    state.inputHash !== undefined &&
    state.inputHash === approvalHash(runId, state.call, approvalKey) &&
    (decidedHash === undefined || decidedHash === state.inputHash)
  );
}
