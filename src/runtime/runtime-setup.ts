import { ConfigError } from "../core/errors.js";
import type { Agent } from "../engine/agent.js";
import type { QueueConcurrency } from "../store/backend.js";
import { type AgentRuntimeOptions, DEFAULT_CONCURRENCY } from "./runtime-options.js";

/** A runtime's agents by `config.name`; two of one name are refused. */
export function agentsByName(
  agents: AgentRuntimeOptions["agents"],
): ReadonlyMap<string, Agent<unknown>> {
  const byName = new Map<string, Agent<unknown>>();
  for (const agent of agents) {
    if (byName.has(agent.config.name)) {
      throw new ConfigError(
        `Two agents are named "${agent.config.name}": a runtime finds agents by config.name.`,
      );
    }
    byName.set(agent.config.name, agent);
  }
  return byName;
}

/** The `concurrency` option as jobs per queue: one number for both, or each with its default. */
export function queueConcurrency(
  concurrency: AgentRuntimeOptions["concurrency"],
): QueueConcurrency {
  return typeof concurrency === "number"
    ? { steps: concurrency, tools: concurrency }
    : {
        steps: concurrency?.steps ?? DEFAULT_CONCURRENCY.steps,
        tools: concurrency?.tools ?? DEFAULT_CONCURRENCY.tools,
      };
}
