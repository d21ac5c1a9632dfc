import { ConfigError } from "../core/errors.js";
import type { Agent } from "../engine/agent.js";
import { isAgentTool } from "../engine/as-tool.js";

/**
 * Refuses a runtime whose agents use as a tool (`agent.asTool`) an agent it does not know: its
 * child runs could never start.
 */
export function checkChildAgents(agents: ReadonlyMap<string, Agent<unknown>>): void {
  for (const agent of agents.values()) {
    for (const schema of agent.tools.schemas()) {
      const each = agent.tools.get(schema.name);
      if (each !== undefined && isAgentTool(each) && !agents.has(each.childAgent)) {
        throw new ConfigError(
          `Agent "${agent.name}" uses agent "${each.childAgent}" as its tool "${each.name}", but the runtime does not know that agent: add it to AgentRuntime({ agents }).`,
        );
      }
    }
  }
}
