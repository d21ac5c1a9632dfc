import { ConfigError } from "../core/errors.js";
import type { Message } from "../core/values.js";
import { findHandoffAgent } from "./handoffs.js";
import type { RunEnv } from "./run-env.js";

/** What a handoff needs of an agent (`Agent`, by its shape: agent.ts imports this module). */
export interface SwitchableAgent {
  readonly name: string;
  readonly started: boolean;
  readonly handoffAgents: readonly SwitchableAgent[];
  start(): Promise<void>;
  runEnv(run: {
    runId: string;
    sessionId: string;
    signal: AbortSignal | undefined;
    emit: RunEnv["emit"];
    conversation?: Message[] | undefined;
  }): RunEnv;
}

/** A direct run's environment as handoffs move it, and the switch `drive` calls on a handoff. */
export interface HandoffSwitch {
  /** The environment of the agent the run is under now. */
  current(): RunEnv;
  switchAgent(name: string): Promise<RunEnv>;
}

/** Follows a direct run from `from` to the handoff agents it is handed to, by name. */
export function handoffSwitch(
  from: SwitchableAgent,
  startEnv: RunEnv,
  run: { runId: string; sessionId: string },
): HandoffSwitch {
  const { runId, sessionId } = run;
  let env = startEnv;
  return {
    current: () => env,
    switchAgent: async (name) => {
      const target = findHandoffAgent(from, name);
      if (target === undefined) {
        throw new ConfigError(
          `Run "${runId}" was handed to agent "${name}", which is not among the handoffs of "${from.name}".`,
        );
      }
      if (!target.started) await target.start();
      // The same conversation goes on under the target.
      env = target.runEnv({
        runId,
        sessionId,
        signal: startEnv.signal,
        emit: startEnv.emit,
        conversation: env.conversation,
      });
      return env;
    },
  };
}
