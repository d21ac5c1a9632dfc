import { DepthExceededError, messageOf } from "../core/errors.js";
import type { RunStatus, ToolResult } from "../core/values.js";
import { type AgentTool, childInputText, childOutput } from "../engine/as-tool.js";
import type { RunEvent } from "../engine/run-events.js";
import type { CallState } from "../machines/call-state.js";
import type { RunLink } from "../store/run-tree.js";
import type { RunRecord } from "../store/schemas.js";
import { isTerminal } from "../store/schemas.js";
import type { ToolCallRun } from "../store/tool-call-view.js";
import { errorResult } from "../tools/run-handler.js";
import { childLinkOf, linkOfRun, traceOfChild } from "./turn-children.js";
import type { WorkerDeps } from "./worker-deps.js";

/** What starting a child run from a call came to: running, or an error result at once. */
export type ChildStart = { child: RunLink } | { result: ToolResult };

/**
 * Starts the child run a permitted call of an agent tool asks for, or finds it started: its
 * link is recorded first (the step that entered dispatch recorded it already, unless the call
 * runs after an approval), then its run is submitted under an id derived from the parent's run
 * and call (so a tool job delivered again starts nothing twice). The parent's call is
 * committed later, when the child finishes (`wakeParent`); the tool job ends at once, holding
 * nothing while the child runs.
 */
export async function startChildRun(
  deps: WorkerDeps,
  parent: ToolCallRun & { context: NonNullable<ToolCallRun["context"]> },
  state: CallState,
  agentTool: AgentTool<unknown>,
): Promise<ChildStart> {
  const { backend } = deps;
  const { call } = state;
  const parentLink = await backend.linkOf(parent.runId);
  const link = childLinkOf(
    deps,
    { runId: parent.runId, agent: parent.agent, iteration: parent.context.iteration },
    parentLink,
    call.id,
    agentTool,
  );
  if (!("runId" in link)) {
    const { depth, maxDepth } = link;
    return { result: errorResult(call.id, new DepthExceededError(depth, maxDepth).message) };
  }
  if (deps.submitChild === undefined) {
    return { result: errorResult(call.id, "Child runs need an AgentRuntime's workers.") };
  }
  await backend.linkChild(link);
  try {
    await deps.submitChild(link, childInputText(call.input, agentTool.defaultInput), {
      sessionId: parent.sessionId,
      ...(parent.priority === undefined ? {} : { priority: parent.priority }),
      ...traceOfChild(parent.trace),
    });
    return { child: link };
  } catch (error) {
    // Refused (say, too big an input): the call fails, not the parent (its tool job releases
    // the child from the ones the parent waits for).
    return { result: errorResult(call.id, `The child run could not start: ${messageOf(error)}`) };
  }
}

/** What a finished child gives its parent's call: its output, or an error with its code. */
export function childCallResult(link: RunLink, record: RunRecord): ToolResult {
  const toolCallId = link.parentToolCallId;
  if (record.result === null) {
    return errorResult(toolCallId, `Child run "${link.runId}" ended without a result.`);
  }
  try {
    return {
      toolCallId,
      content: childOutput(link.runId, link.agent, record.result),
      isError: false,
    };
  } catch (error) {
    return errorResult(toolCallId, messageOf(error));
  }
}

/**
 * A child run finished: its outcome is committed to its parent's call (first write wins) and,
 * when it was the last child running, the parent's next step is queued. Called by every step
 * that finds a child finished, so that a step delivered again after a crash between the child's
 * last save and this repeats it: nothing is lost, nothing is committed twice.
 */
export async function wakeParent(deps: WorkerDeps, record: RunRecord): Promise<void> {
  if (!isTerminal(record.status)) return;
  const { backend } = deps;
  const link = await linkOfRun(deps, record);
  if (link === undefined) return;
  const finished: RunEvent = {
    type: "child_finished",
    childRunId: link.runId,
    agent: link.agent,
    toolCallId: link.parentToolCallId,
    status: record.status as RunStatus,
  };
  // The commit, its event and the count in one write (a step delivered again may add the
  // event twice, and commits nothing twice).
  const outcome = { result: childCallResult(link, record), events: [finished] };
  if (await backend.childFinished(link, outcome)) await backend.enqueueStep(link.parentRunId);
}
