import type { RuntimeDeps } from "../core/deps.js";
import type { Agent } from "../engine/agent.js";
import type { RunBackend } from "../store/backend.js";
import { priorityOf } from "../store/schemas.js";
import type { ToolLimits } from "../tools/result-limit.js";
import { type DecisionOptions, type RequestedDecision, recordDecision } from "./approvals.js";

/** What a runtime lends to a person's decision on a pending call. */
export interface DecidingRuntime {
  backend: RunBackend;
  agents: ReadonlyMap<string, Agent<unknown>>;
  deps: RuntimeDeps;
  limits: ToolLimits;
}

/** Records a person's decision on a parked run's call and, once the call is decided, steps the run. */
export async function decideCall(
  runtime: DecidingRuntime,
  runId: string,
  toolCallId: string,
  decision: RequestedDecision,
  options: Pick<DecisionOptions, "by" | "reason">,
): Promise<void> {
  const { backend, agents, deps } = runtime;
  const { record, decided } = await recordDecision(backend, {
    runId,
    toolCallId,
    decision,
    options,
    id: deps.generateId(),
    now: deps.clock.now(),
    agent: (name) => {
      const agent = agents.get(name);
      if (agent === undefined) return undefined;
      const env = agent.runEnv({ runId, sessionId: "", signal: undefined, emit: undefined });
      return { key: env.approvalKey, env };
    },
    limits: runtime.limits,
  });
  // A quorum approval that others must still join leaves the run parked: no step to run.
  if (decided) {
    await backend.enqueueStep(runId, { ...priorityOf(record), agent: record.agent });
  }
}
