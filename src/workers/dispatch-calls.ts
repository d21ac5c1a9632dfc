import { entryById } from "../core/id-record.js";
import type { ToolResult } from "../core/values.js";
import { type CallState, runsHandler } from "../machines/run-machine.js";
import type { RunBackend } from "../store/backend.js";
import { callKey } from "../store/run-view.js";
import type { ToolJob } from "../store/schemas.js";

/** Where a run at `dispatch` stands with its calls: what is committed, what still runs. */
export interface CallsAtDispatch {
  /** The permitted calls whose handlers run (on tool jobs). */
  todo: CallState[];
  /** Their raw results committed so far, by call id. */
  committed: Readonly<Record<string, ToolResult>>;
  /** Of `todo`, the calls without a committed result. */
  missing: CallState[];
  /** The calls a crash interrupted under recovery `ask` (by `callKey`), with the reason. */
  interrupted: Map<string, string>;
  /** Of `missing`, those not interrupted: a tool job of each moves the run on. */
  running: CallState[];
}

/**
 * Reads where the calls of a run at `dispatch` stand: `calls` are the machine's, `prefetched`
 * the raw results read with the lease or the save (none: read now). A dispatch the step
 * `drove` to has no call interrupted yet (none is read).
 */
export async function callsAtDispatch(
  backend: Pick<RunBackend, "rawResults" | "interruptedCalls">,
  run: { runId: string; iteration: number; calls: readonly CallState[] },
  options: { prefetched?: Record<string, ToolResult> | undefined; drove: boolean },
): Promise<CallsAtDispatch> {
  const { runId, iteration } = run;
  const todo = run.calls.filter(runsHandler);
  const committed =
    todo.length === 0 ? {} : (options.prefetched ?? (await backend.rawResults(runId, iteration)));
  const missing = todo.filter((state) => entryById(committed, state.call.id) === undefined);
  const interrupted =
    missing.length === 0 || options.drove
      ? new Map<string, string>()
      : await backend.interruptedCalls(runId, iteration);
  const running = missing.filter((state) => !interrupted.has(callKey(state)));
  return { todo, committed, missing, interrupted, running };
}

/** Queues tool `jobs` (their ids are fixed per call attempt: one queued already is not again). */
export async function queueToolJobs(
  backend: Pick<RunBackend, "enqueueTool">,
  jobs: readonly ToolJob[],
): Promise<void> {
  await Promise.all(jobs.map((job) => backend.enqueueTool(job)));
}
