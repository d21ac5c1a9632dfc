import type { ToolResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import type { ApprovalNoticeJob } from "../store/approval-request.js";
import type { BackendRoles, RunBackend } from "../store/backend.js";
import type { QuorumApproval } from "../store/call-ledger.js";
import type { EnqueueStepOptions, NoticeRetry } from "../store/job-queue.js";
import type { HeldToken } from "../store/leases.js";
import type { OverviewQuery } from "../store/overview.js";
import type { RunQuery } from "../store/run-query.js";
import type { SaveOptions } from "../store/run-store.js";
import type { ChildOutcome, RunLink } from "../store/run-tree.js";
import type { RunRecord, StoredDecision, ToolJob } from "../store/schemas.js";
import type { DecisionRecord } from "../store/summary.js";

/**
 * A backend built from its roles: each member is its role's, so a role can be written, read and
 * tested on its own while `AgentRuntime` and the workers see one `RunBackend`.
 */
export function composeBackend(roles: BackendRoles): RunBackend {
  return new ComposedBackend(roles);
}

export class ComposedBackend implements RunBackend {
  readonly kind: RunBackend["kind"];
  readonly retentionMs: number;
  readonly lockDurationMs: number;
  readonly extensionState: RunBackend["extensionState"];
  readonly recordings: RunBackend["recordings"];
  readonly publishesInOrder: boolean;
  readonly #roles: BackendRoles;

  // Values are copied, not read through getters: a `Proxy` around the backend (tests,
  // `reportingUnavailable`) may read them with itself as the receiver.
  constructor(roles: BackendRoles) {
    this.#roles = roles;
    this.kind = roles.lifecycle.kind;
    this.retentionMs = roles.lifecycle.retentionMs;
    this.lockDurationMs = roles.leases.lockDurationMs;
    this.extensionState = roles.store.extensionState;
    this.recordings = roles.events.recordings;
    this.publishesInOrder = roles.events.publishesInOrder === true;
  }

  // Lifecycle
  start(options: Parameters<RunBackend["start"]>[0]) {
    return this.#roles.lifecycle.start(options);
  }
  close(options: Parameters<RunBackend["close"]>[0]) {
    return this.#roles.lifecycle.close(options);
  }

  // RunStore
  createRun(record: RunRecord) {
    return this.#roles.store.createRun(record);
  }
  loadRun(runId: string) {
    return this.#roles.store.loadRun(runId);
  }
  runStatus(runId: string) {
    return this.#roles.store.runStatus(runId);
  }
  listRuns(query: RunQuery) {
    return this.#roles.store.listRuns(query);
  }
  overview(query: OverviewQuery) {
    return this.#roles.store.overview(query);
  }
  pruneRuns(finishedBefore: number) {
    return this.#roles.store.pruneRuns(finishedBefore);
  }
  deleteRun(runId: string) {
    return this.#roles.store.deleteRun(runId);
  }
  deleteSessionState(sessionId: string) {
    return this.#roles.store.deleteSessionState(sessionId);
  }
  saveRun(runId: string, token: number, record: RunRecord, options?: SaveOptions) {
    return this.#roles.store.saveRun(runId, token, record, options);
  }
  watchRuns(signal: AbortSignal) {
    return this.#roles.store.watchRuns(signal);
  }

  // Leases
  acquireLease(runId: string) {
    return this.#roles.leases.acquireLease(runId);
  }
  renewLease(runId: string, token: number) {
    return this.#roles.leases.renewLease(runId, token);
  }
  renewLeases(leases: readonly HeldToken[]) {
    return this.#roles.leases.renewLeases(leases);
  }
  releaseLease(runId: string, token: number) {
    return this.#roles.leases.releaseLease(runId, token);
  }
  requestCancel(runId: string, by?: string) {
    return this.#roles.leases.requestCancel(runId, by);
  }
  cancelRequested(runId: string) {
    return this.#roles.leases.cancelRequested(runId);
  }
  cancelledBy(runId: string) {
    return this.#roles.leases.cancelledBy(runId);
  }

  // CallLedger
  openToolCall(runId: string, iteration: number, toolCallId: string, markStarted?: string) {
    return this.#roles.ledger.openToolCall(runId, iteration, toolCallId, markStarted);
  }
  commitRaw(runId: string, iteration: number, result: ToolResult, events?: readonly RunEvent[]) {
    return this.#roles.ledger.commitRaw(runId, iteration, result, events);
  }
  rawResults(runId: string, iteration: number) {
    return this.#roles.ledger.rawResults(runId, iteration);
  }
  markCallStarted(runId: string, iteration: number, callKey: string, events?: readonly RunEvent[]) {
    return this.#roles.ledger.markCallStarted(runId, iteration, callKey, events);
  }
  markCallInterrupted(runId: string, iteration: number, callKey: string, reason: string) {
    return this.#roles.ledger.markCallInterrupted(runId, iteration, callKey, reason);
  }
  interruptedCalls(runId: string, iteration: number) {
    return this.#roles.ledger.interruptedCalls(runId, iteration);
  }
  decide(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    check?: (record: RunRecord | undefined) => void,
  ) {
    return this.#roles.ledger.decide(runId, iteration, callKey, decision, audit, check);
  }
  decideInQuorum(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    approval: QuorumApproval,
    check?: (record: RunRecord | undefined) => void,
  ) {
    return this.#roles.ledger.decideInQuorum(
      runId,
      iteration,
      callKey,
      decision,
      audit,
      approval,
      check,
    );
  }
  quorumApprovals(runId: string, iteration: number) {
    return this.#roles.ledger.quorumApprovals(runId, iteration);
  }
  decisions(runId: string, iteration: number) {
    return this.#roles.ledger.decisions(runId, iteration);
  }
  auditTrail(runId: string) {
    return this.#roles.ledger.auditTrail(runId);
  }

  // EventLog
  publish(runId: string, events: RunEvent | readonly RunEvent[]) {
    return this.#roles.events.publish(runId, events);
  }
  events(runId: string, options?: { live?: boolean }) {
    return this.#roles.events.events(runId, options);
  }
  followEvents(runId: string, after: number) {
    return this.#roles.events.followEvents(runId, after);
  }
  readEvents(runId: string, after: number, limit: number) {
    return this.#roles.events.readEvents(runId, after, limit);
  }
  checkpoints(runId: string) {
    return this.#roles.events.checkpoints(runId);
  }

  // JobQueue
  submitRun(record: RunRecord, options?: EnqueueStepOptions) {
    return this.#roles.jobs.submitRun(record, options);
  }
  submitRuns(records: readonly RunRecord[], options?: EnqueueStepOptions) {
    return this.#roles.jobs.submitRuns(records, options);
  }
  enqueueStep(runId: string, options?: EnqueueStepOptions) {
    return this.#roles.jobs.enqueueStep(runId, options);
  }
  enqueueTool(job: ToolJob) {
    return this.#roles.jobs.enqueueTool(job);
  }
  modelLimiter() {
    return this.#roles.jobs.modelLimiter();
  }
  enqueueNotice(job: ApprovalNoticeJob, retry: NoticeRetry) {
    return this.#roles.jobs.enqueueNotice(job, retry);
  }

  // RunTree
  waitForChildren(parentRunId: string, token: number, links: readonly RunLink[]) {
    return this.#roles.tree.waitForChildren(parentRunId, token, links);
  }
  linkChild(link: RunLink) {
    return this.#roles.tree.linkChild(link);
  }
  linkOf(runId: string, saved?: RunRecord) {
    return this.#roles.tree.linkOf(runId, saved);
  }
  childrenOf(parentRunId: string) {
    return this.#roles.tree.childrenOf(parentRunId);
  }
  descendantsOf(rootRunId: string) {
    return this.#roles.tree.descendantsOf(rootRunId);
  }
  childFinished(link: RunLink, outcome?: ChildOutcome) {
    return this.#roles.tree.childFinished(link, outcome);
  }
  releaseChild(link: Pick<RunLink, "runId" | "parentRunId">) {
    return this.#roles.tree.releaseChild(link);
  }
  runningChildren(parentRunId: string) {
    return this.#roles.tree.runningChildren(parentRunId);
  }
}
