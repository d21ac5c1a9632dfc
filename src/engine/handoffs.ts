import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { entryById } from "../core/id-record.js";
import type { RunContext } from "../machines/run-machine.js";
import { errorResult } from "../tools/run-handler.js";
import { type Tool, tool } from "../tools/tool.js";
import type { RunEnv } from "./run-env.js";

// Handoffs (§14): `new Agent({ handoffs: [writer] })` gives the model a `transfer_to_writer`
// tool. The call runs like any tool call (validation, permissions, a durable commit); once the
// turn's results are in, the run goes on under the target agent (same run id, same
// conversation). The machine keeps the current agent in its context, so a durable run resumed
// after a handoff resumes under the agent it was handed to.

/** The tool name that hands a run to the agent named `agentName`. */
export function handoffToolName(agentName: string): string {
  return `transfer_to_${agentName.replace(/[^a-zA-Z0-9_-]/g, "_")}`.slice(0, 64);
}

/** The `transfer_to_<name>` tools of an agent's handoffs, and their targets by tool name. */
export function handoffTools(
  from: string,
  targets: readonly { readonly name: string }[],
): { tools: Tool<unknown>[]; byTool: ReadonlyMap<string, string> } {
  const byTool = new Map<string, string>();
  const tools: Tool<unknown>[] = [];
  for (const { name } of targets) {
    const toolName = handoffToolName(name);
    if (byTool.has(toolName)) {
      throw new ConfigError(
        `Agent "${from}": two handoffs use the tool name "${toolName}" (agent names must differ).`,
      );
    }
    byTool.set(toolName, name);
    tools.push(
      tool({
        name: toolName,
        description: `Hand the conversation over to the agent "${name}": it continues the run with its own instructions and tools. Call it alone, with no other tools in the same turn.`,
        input: z.object({}),
        handler: async () => `Transferred to agent "${name}".`,
      }) as Tool<unknown>,
    );
  }
  return { tools, byTool };
}

/** A turn's handoff: the agent it goes to, and the results that replace refused transfers. */
export interface SettledHandoff {
  to: string | undefined;
  refused: ReadonlyMap<string, string>;
}

/**
 * Which `transfer_to_<name>` call of the turn hands the run over: the first, in the model's
 * call order, whose call succeeded and whose agent is known (a runtime finds agents by name).
 * Every other successful transfer of the turn gets an error result saying why it did not
 * happen; the other tools' calls of the turn keep their results.
 */
export function settleHandoff(context: RunContext, env: RunEnv): SettledHandoff {
  const refused = new Map<string, string>();
  let to: string | undefined;
  for (const state of context.calls) {
    const target = env.handoffs?.get(state.call.name);
    if (target === undefined) continue;
    const outcome = state.result ?? entryById(context.raw, state.call.id);
    if (outcome === undefined || outcome.isError) continue;
    if (to !== undefined) {
      refused.set(
        state.call.id,
        `Not transferred: this turn already transferred the conversation to "${to}" (one handoff a turn).`,
      );
    } else if (env.agentKnown !== undefined && !env.agentKnown(target)) {
      refused.set(
        state.call.id,
        `Not transferred: no agent "${target}" is registered with this runtime; the conversation stays with "${env.config.name}".`,
      );
    } else {
      to = target;
    }
  }
  return { to, refused };
}

/** The result the model sees for a transfer that was refused. */
export const refusedHandoffResult = (toolCallId: string, reason: string) =>
  errorResult(toolCallId, reason);

/**
 * The agent named `name` among `start`'s handoffs, theirs, and so on: a direct run handed on
 * twice is resumed on the agent it started on.
 */
export function findHandoffAgent<A extends { readonly handoffAgents: readonly A[] }>(
  start: A,
  name: string,
): A | undefined {
  const seen = new Set<A>();
  const queue = [start];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (seen.has(next)) continue;
    seen.add(next);
    const found = next.handoffAgents.find((agent) => (agent as { name?: string }).name === name);
    if (found !== undefined) return found;
    queue.push(...next.handoffAgents);
  }
  return undefined;
}
