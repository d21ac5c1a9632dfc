import type { RunEvent } from "../engine/run-events.js";
import type { RunRecord } from "./schemas.js";

/**
 * The `child_started` event a child run's creation appends to its parent's event log, in the
 * same write that stores the child (`RunStore.createRun`, `JobQueue.submitRuns`): so a child
 * that exists is told on its parent's log exactly once, whatever crash or retry came between
 * the submit and the step that asked for it (SPEC §14). Undefined for a run without a parent.
 */
export function childStartedOf(record: RunRecord): RunEvent | undefined {
  const { parentRunId, parentToolCallId } = record;
  if (parentRunId === undefined || parentToolCallId === undefined) return undefined;
  return {
    type: "child_started",
    childRunId: record.runId,
    agent: record.agent,
    toolCallId: parentToolCallId,
  };
}
