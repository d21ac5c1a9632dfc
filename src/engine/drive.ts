import { InternalError, RunCancelledError, toHarnessError, toRunError } from "../core/errors.js";
import { withinRun } from "../extensions/run-scope.js";
import type { RunCursor } from "../machines/run-cursor.js";
import {
  messagesAddedBy,
  type Phase,
  STAGE_OF_PHASE,
  type StagePhase,
} from "../machines/run-machine.js";
import type { ProviderDeferral } from "./provider-gate.js";
import { record } from "./record.js";
import type { RunEnv } from "./run-env.js";
import { STAGES } from "./stages.js";
import { ABORTED, unlessAborted } from "./unless-aborted.js";

export interface DriveOptions {
  /** Stop (without running it) when the run enters one of these phases; e.g. a worker hands `dispatch` on. */
  stopAt?: ReadonlySet<Phase>;
  /** Called after every phase boundary, e.g. to persist the snapshot. */
  onBoundary?: (cursor: RunCursor, finished: Phase) => Promise<void> | void;
  /**
   * The environment of the agent a handoff moved the run to (`RunContext.agent`), for the
   * stages from then on. Without it, the run's stages keep `env`.
   */
  switchAgent?: (agent: string) => Promise<RunEnv> | RunEnv;
}

export const currentPhase = (cursor: RunCursor): Phase => cursor.getSnapshot().value as Phase;

const cancelledEvent = (phase: string) => ({
  type: "CANCEL" as const,
  error: new RunCancelledError(phase).toJSON(),
});

/**
 * Advances a run through its phases until it finishes, parks for approval, or reaches a
 * `stopAt` phase. The machine decides each next phase; this runs the stage it names. Resolves
 * with the deferral when the run's model call waits for its rate limit (the run stays where it
 * is, at `provider`), else with nothing.
 */
export async function drive(
  cursor: RunCursor,
  startEnv: RunEnv,
  options: DriveOptions = {},
): Promise<ProviderDeferral | undefined> {
  let env = startEnv;
  for (;;) {
    const snapshot = cursor.getSnapshot();
    if (snapshot.status !== "active") {
      if (env.recorder !== undefined) await recordEnd(cursor, env);
      return undefined;
    }
    const phase = snapshot.value as Phase;
    if (phase === "awaitingApproval" || options.stopAt?.has(phase)) return undefined;
    if (env.signal.aborted) {
      cursor.send(cancelledEvent(phase));
    } else {
      const stage = STAGES[STAGE_OF_PHASE[phase as StagePhase]];
      try {
        const { agent } = snapshot.context;
        if (agent !== undefined && agent !== env.config.name && options.switchAgent) {
          env = await options.switchAgent(agent);
        }
        const running =
          env.runScope === undefined
            ? stage(snapshot.context, env)
            : withinRun(env.runScope, () => stage(snapshot.context, env));
        const event = await unlessAborted(running, env.signal);
        if (event === ABORTED || env.signal.aborted) {
          cursor.send(cancelledEvent(phase));
        } else if (event.type === "PROVIDER_DEFERRED") {
          // Not the run's failure: the step ends here and the run is stepped again later.
          return event.deferral;
        } else {
          cursor.send(event);
          // The machine counts the messages its event adds; the run's log holds them.
          const grown = cursor.getSnapshot().context.messageCount - snapshot.context.messageCount;
          if (grown > 0) env.conversation.push(...messagesAddedBy(event).slice(0, grown));
        }
      } catch (error) {
        // A throw no harnessx error names is not the store's failure: it is an internal one.
        const failure = toHarnessError(
          error,
          (message, stageOptions) => new InternalError(message, stageOptions),
          phase,
        );
        const cancelled = env.signal.aborted || failure.code === "run_cancelled";
        const runError = { ...toRunError(failure), phase: failure.phase ?? phase };
        if (!cancelled) await record(env, snapshot.context, { type: "error", error: runError });
        cursor.send(cancelled ? cancelledEvent(phase) : { type: "FAIL", error: runError });
      }
    }
    // The run's end is recorded before the boundary saves it: the save publishes the result,
    // and a reader of the recording after the result must find the whole recording.
    if (env.recorder !== undefined && cursor.getSnapshot().status !== "active") {
      await recordEnd(cursor, env);
      await options.onBoundary?.(cursor, phase);
      return undefined;
    }
    // Direct runs have no boundary work: no await (and its microtask) per stage.
    if (options.onBoundary !== undefined) await options.onBoundary(cursor, phase);
  }
}

/** The run's outcome, for its flight recording. */
async function recordEnd(cursor: RunCursor, env: RunEnv): Promise<void> {
  const { value, context } = cursor.getSnapshot();
  const status = value === "done" ? "completed" : value === "cancelled" ? "cancelled" : "failed";
  const { output, error } = context;
  await record(env, context, { type: "run_end", status, output, error });
}
