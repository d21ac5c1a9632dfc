import type { GivenApproval, ToolResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import type { RunRecord, StoredDecision } from "./schemas.js";
import type { DecisionRecord } from "./summary.js";
import type { ToolCallRun } from "./tool-call-view.js";

/** One person's approval on a quorum call, as `decideInQuorum` counts it. */
export interface QuorumApproval {
  /** The decider: approvals count once per `by`. */
  by: string;
  needed: number;
  /** The hash of the input approved (the edit's, or the call's); absent for deny and respond. */
  inputHash?: string;
}

export type QuorumOutcome = "decided" | "counted" | "repeated" | "already_decided";

/** What a tool job reads before it runs its call (`CallLedger.openToolCall`). */
export interface OpenedToolCall {
  /** The run without its conversation (none when unknown). */
  run: ToolCallRun | undefined;
  /** A raw result of the call is committed for the iteration. */
  committed: boolean;
  cancelRequested: boolean;
  /**
   * With `markStarted`: whether this read marked the call attempt started (false: it was
   * marked before, as `markCallStarted` says); absent when it did not try (the run is unknown
   * or finished, the call committed, or a cancel asked).
   */
  started?: boolean;
}

/**
 * The call ledger's role: what happened to each tool call of each iteration — attempts started,
 * raw results committed (the first wins, so a committed handler never runs again), attempts
 * waiting for a person, and decisions with their audit trail.
 *
 * A call's key (`callKey`) names one attempt of a call: its id, then a marked `n#id` after n crash
 * interruptions that asked a person again. In-flight markers and decisions are kept by key.
 */
export interface CallLedger {
  /**
   * What a tool job for call `toolCallId` of `iteration` reads, at once (Redis: one script
   * call): the run without its conversation (`toolCallRun`: `StoreVersionError` for another
   * `schemaVersion`, `record_corrupt` when what it reads does not parse), whether the call's
   * raw result is committed, and the cancel flag.
   * `markStarted` (the attempt's `callKey`): in the same atomic read, marks that attempt of the
   * call started as `markCallStarted` does (without events), unless the run is unknown or
   * finished, the call has a committed raw result, or a cancel was asked. A tool job marks so
   * before it re-checks the policy: a mark left by a job that then does not run the handler
   * (stale, or refused or asked about at the re-check) is followed by the call's commit or
   * interruption, or belongs to an attempt the run has left.
   */
  openToolCall(
    runId: string,
    iteration: number,
    toolCallId: string,
    markStarted?: string,
  ): Promise<OpenedToolCall>;
  /**
   * Commits a handler's raw outcome; idempotent, the first write wins. True when this one won.
   * A step of the run queued (`enqueueStep`) once this is called sees the commit, even when it
   * is queued before this resolves: the two may share a round trip.
   * `events` (what the call's tool job emitted and has not sent yet) are appended to the run's
   * log in the same atomic write, whether or not the commit wins.
   */
  commitRaw(
    runId: string,
    iteration: number,
    result: ToolResult,
    events?: readonly RunEvent[],
  ): Promise<boolean>;
  rawResults(runId: string, iteration: number): Promise<Record<string, ToolResult>>;
  /**
   * Records that this attempt of the call (`callKey`) started its handler; atomic, the first
   * write wins (a tool job marks with its first read: `openToolCall`'s `markStarted`). False
   * when it was recorded before: an earlier delivery of the same tool job started the handler
   * and, unless it committed a raw result, crashed or lost its job in it — the tool's
   * `recovery` decides what happens.
   * `events` (the handler's `tool_start`) are appended to the run's log in the same atomic
   * write when this marks the start, and not at all when the start was marked before.
   */
  markCallStarted(
    runId: string,
    iteration: number,
    callKey: string,
    events?: readonly RunEvent[],
  ): Promise<boolean>;
  /**
   * Records that a call attempt did not run and waits for a person, and why: a crash
   * interrupted it (its tool's recovery is `ask`), or the policy asks about it at dispatch.
   * As with `commitRaw`, a step queued once this is called sees it.
   */
  markCallInterrupted(
    runId: string,
    iteration: number,
    callKey: string,
    reason: string,
  ): Promise<void>;
  /** The iteration's call attempts recorded as waiting for a person: call key → reason. */
  interruptedCalls(runId: string, iteration: number): Promise<Map<string, string>>;
  /**
   * Records a decision on a call attempt (`callKey`) unless one exists (atomic): true if won.
   * The winning decision's `audit` entry joins the run's audit trail in the same write.
   * `check` is given the run's record as stored when the decision is written, in the same
   * atomic step (Redis: the write is refused and the check run again if the record changed
   * since it was read): it throws to refuse the decision, and nothing is written.
   */
  decide(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    check?: (record: RunRecord | undefined) => void,
  ): Promise<boolean>;
  /**
   * Records a decision on a call attempt that needs `needed` distinct approvers (a quorum rule),
   * atomically as `decide` does (`check` likewise). An allow counts the person's approval of
   * `approval.inputHash` (the input they approved: edited or not); the call is decided (its
   * allow recorded as `decide` records one) once `needed` people approved the same input. A
   * deny or respond decides at once. Each counted approval joins the audit trail.
   * `decided`: this decision decided the call; `counted`: an approval counted, the call still
   * waits; `repeated`: `approval.by` has already decided this call; `already_decided`.
   */
  decideInQuorum(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    approval: QuorumApproval,
    check?: (record: RunRecord | undefined) => void,
  ): Promise<QuorumOutcome>;
  /** The iteration's approvals counted so far on quorum calls still waiting, by call key. */
  quorumApprovals(runId: string, iteration: number): Promise<Record<string, GivenApproval[]>>;
  /** The iteration's decisions by call key. */
  decisions(runId: string, iteration: number): Promise<Record<string, StoredDecision>>;
  /** The run's audit trail: every decision recorded with `decide`, oldest first. */
  auditTrail(runId: string): Promise<DecisionRecord[]>;
}
