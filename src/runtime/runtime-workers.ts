import type { Logger } from "pino";
import type { ActiveRuns } from "../store/active-runs.js";
import type { RunBackend } from "../store/backend.js";
import type { EnqueueStepOptions, JobProcessors } from "../store/job-queue.js";
import { priorityOf, type RunRecord } from "../store/schemas.js";
import type { ToolLimits } from "../tools/result-limit.js";
import { ProviderGates } from "../workers/provider-gates.js";
import { giveUpStep, runStep } from "../workers/run-step.js";
import { dispatchTool } from "../workers/tool-dispatch.js";
import type { ChildSubmit, WorkerDeps } from "../workers/worker-deps.js";
import type { ApprovalNotifications } from "./approval-notifications.js";
import { wakeExisting } from "./existing-run.js";
import { newRunRecord, type RunRecordSource } from "./new-run-record.js";

/** What a runtime gives its workers. */
export interface RuntimeWorkerParts {
  /** What builds the records of child runs (agents used as tools). */
  records: RunRecordSource;
  logger: Logger;
  active: ActiveRuns;
  limits: ToolLimits;
  notifications: ApprovalNotifications;
}

/** The workers' shared parts, with the child-run submit of agents used as tools. */
export function runtimeWorkerDeps(parts: RuntimeWorkerParts): WorkerDeps {
  const { records, notifications } = parts;
  const { backend, deps } = records;
  // The child's own run span, under its parent's.
  const childRecord = ({
    link,
    input,
    options: { trace, ...options },
  }: ChildSubmit): RunRecord => ({
    ...newRunRecord(records, link.agent, input, options, link.runId, trace),
    parentRunId: link.parentRunId,
    parentToolCallId: link.parentToolCallId,
    rootRunId: link.rootRunId,
  });
  return {
    submitChild: async (link, input, options) => {
      await records.traces.ready();
      const record = childRecord({ link, input, options });
      const step = { ...priorityOf(record), agent: link.agent };
      if (await backend.submitRun(record, step)) return true;
      records.traces.drop([record]);
      await wakeStoredChild(backend, record, step);
      return false;
    },
    submitChildren: async (children) => {
      await records.traces.ready();
      const built = children.map(childRecord);
      const existing = new Set(await backend.submitRuns(built));
      const before = built.filter((each) => existing.has(each.runId));
      records.traces.drop(before);
      for (const record of before) await wakeStoredChild(backend, record, priorityOf(record));
      return built.filter((each) => !existing.has(each.runId)).map((each) => each.runId);
    },
    runSpans: records.traces.spans,
    backend,
    agents: records.agents,
    logger: parts.logger,
    clock: deps.clock,
    active: parts.active,
    limits: {
      maxToolInputBytes: parts.limits.maxToolInputBytes,
      maxToolResultBytes: parts.limits.maxToolResultBytes,
    },
    gates: new ProviderGates(backend.modelLimiter(), deps.clock),
    ...(notifications.enabled
      ? {
          approvalRequested: (jobs, { again }) => notifications.requested(backend, jobs, { again }),
        }
      : {}),
  };
}

/**
 * A child its submit did not store: stored before (a step or tool job delivered again), stepped
 * again if still queued; or not stored at all, as its link was gone (its call released it:
 * `RunTree.releaseChild`), and the call goes on without it.
 */
async function wakeStoredChild(
  backend: RunBackend,
  record: RunRecord,
  step: EnqueueStepOptions,
): Promise<void> {
  // Rare (a delivery again, a release racing the start): read twice rather than thread it.
  if ((await backend.loadRun(record.runId)) === undefined) return;
  await wakeExisting(backend, record.runId, record.agent, step);
}

/** The job processors of a runtime's workers: steps, tool calls and approval notices. */
export function runtimeProcessors(
  deps: WorkerDeps,
  notifications: ApprovalNotifications,
): JobProcessors {
  return {
    step: async (job, delivery) => {
      const giveUp = delivery.gaveUp ?? job.giveUp;
      if (giveUp === undefined) return runStep(deps, job, delivery);
      await giveUpStep(deps, job.runId, giveUp, job.priority);
      return undefined;
    },
    tool: (job, delivery) => dispatchTool(deps, job, delivery),
    ...notifications.processor(),
  };
}
