import { type AgentTool, childRunId, isAgentTool } from "../engine/as-tool.js";
import type { CallState } from "../machines/call-state.js";
import type { RunLink } from "../store/run-tree.js";
import type { ToolRegistry } from "../tools/registry.js";
import { agentFor, type WorkerDeps } from "./worker-deps.js";

/** The parent run a call starts a child from: its id, first agent and current iteration. */
export interface ParentOfCall {
  runId: string;
  /** The agent the run was submitted for (its `maxDepth` bounds the tree). */
  agent: string;
  iteration: number;
}

/** The depth a call's child would have, over the parent's `maxDepth`. */
export interface TooDeep {
  depth: number;
  maxDepth: number;
}

/**
 * The link of the child run that call `callId` of `agentTool` starts under `parent` (whose own
 * link is `parentLink`; none for a root), or the depth it would exceed. The child's id is
 * derived from the parent's run id and the call's, so every delivery builds the same link.
 */
export function childLinkOf(
  deps: WorkerDeps,
  parent: ParentOfCall,
  parentLink: RunLink | undefined,
  callId: string,
  agentTool: AgentTool<unknown>,
): RunLink | TooDeep {
  const depth = (parentLink?.depth ?? 0) + 1;
  const { maxDepth } = agentFor(deps, parent.agent, parent.runId).config;
  if (depth > maxDepth) return { depth, maxDepth };
  return {
    runId: childRunId(parent.runId, callId),
    agent: agentTool.childAgent,
    parentRunId: parent.runId,
    parentToolCallId: callId,
    parentIteration: parent.iteration,
    rootRunId: parentLink?.rootRunId ?? parent.runId,
    depth,
    createdAt: deps.clock.now(),
  };
}

/**
 * Records the children the calls of a turn start (its agent-tool calls) on the parent, in one
 * write fenced by the step's lease `token`, before the turn's tool jobs are queued: so no child
 * can finish before its siblings count, and the last one to finish is the one that wakes the
 * parent (SPEC §14). True when the turn starts any child: the parent then waits for them
 * (status `waiting`). A call over `maxDepth` starts none (its tool job answers
 * `depth_exceeded`), nor does any call where children cannot start (no `submitChild`).
 */
export async function waitForTurnChildren(
  deps: WorkerDeps,
  parent: ParentOfCall & { token: number },
  calls: readonly CallState[],
  tools: ToolRegistry,
): Promise<boolean> {
  if (deps.submitChild === undefined) return false;
  const agentCalls = calls.flatMap((state) => {
    const tool = tools.get(state.call.name);
    return tool !== undefined && isAgentTool(tool) ? [{ id: state.call.id, tool }] : [];
  });
  if (agentCalls.length === 0) return false;
  const parentLink = await deps.backend.linkOf(parent.runId);
  const links = agentCalls.flatMap(({ id, tool }) => {
    const link = childLinkOf(deps, parent, parentLink, id, tool);
    return "runId" in link ? [link] : [];
  });
  if (links.length === 0) return false;
  await deps.backend.waitForChildren(parent.runId, parent.token, links);
  return true;
}
