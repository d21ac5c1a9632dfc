import type { GivenApproval, ToolResult } from "../../core/values.js";
import type { RunEvent } from "../../engine/run-events.js";
import type {
  CallLedger,
  OpenedToolCall,
  QuorumApproval,
  QuorumOutcome,
} from "../../store/call-ledger.js";
import { decodeStored } from "../../store/record/codec.js";
import { isTerminal, type RunRecord, StoredDecision } from "../../store/schemas.js";
import { DecisionRecord } from "../../store/summary.js";
import { type LastMessage, type ToolCallRun, toolCallRun } from "../../store/tool-call-view.js";

const roundKey = (runId: string, iteration: number) => `${runId}\u0000${iteration}`;

/** An approval counted towards a quorum, with its request's id (a re-sent request counts once). */
type CountedApproval = GivenApproval & { id: string; inputHash: string };

/** A call attempt's in-flight mark: its handler started, or it waits for a person (and why). */
type CallMark = { started: true } | { started: false; reason: string };

/** What the ledger reads of the other roles, synchronously (inside its atomic steps). */
export interface MemoryLedgerSources {
  /** The run's stored document (the record without its conversation). */
  document(runId: string): string | undefined;
  /** The last message of the run's stored conversation (`MemoryRunStore.lastMessageOf`). */
  lastMessage(runId: string): LastMessage | undefined;
  record(runId: string): RunRecord | undefined;
  cancelled(runId: string): boolean;
  publish(runId: string, event: RunEvent): void;
}

/** The call ledger in memory: raw results, in-flight marks and decisions by round, audit trails. */
export class MemoryCallLedger implements CallLedger {
  readonly #sources: MemoryLedgerSources;
  readonly #raw = new Map<string, Map<string, ToolResult>>();
  readonly #decisions = new Map<string, Map<string, string>>();
  /** In-flight marks by round, then call key. */
  readonly #inFlight = new Map<string, Map<string, CallMark>>();
  /** Approvals counted on quorum calls, by round, then call key. */
  readonly #quorum = new Map<string, Map<string, CountedApproval[]>>();
  /** Audit trails by run: each decision's JSON, oldest first. Not expired with the run's data. */
  readonly #audit = new Map<string, string[]>();

  constructor(sources: MemoryLedgerSources) {
    this.#sources = sources;
  }

  async openToolCall(
    runId: string,
    iteration: number,
    toolCallId: string,
    markStarted?: string,
  ): Promise<OpenedToolCall> {
    const document = this.#sources.document(runId);
    const run: ToolCallRun | undefined =
      document === undefined
        ? undefined
        : toolCallRun(document, undefined, toolCallId, this.#sources.lastMessage(runId));
    const committed = this.#raw.get(roundKey(runId, iteration))?.has(toolCallId) === true;
    const cancelRequested = this.#sources.cancelled(runId);
    const marking =
      markStarted !== undefined &&
      run !== undefined &&
      !isTerminal(run.status) &&
      !committed &&
      !cancelRequested;
    return {
      run,
      committed,
      cancelRequested,
      ...(marking ? { started: await this.markCallStarted(runId, iteration, markStarted) } : {}),
    };
  }

  async commitRaw(
    runId: string,
    iteration: number,
    result: ToolResult,
    events: readonly RunEvent[] = [],
  ): Promise<boolean> {
    for (const event of events) this.#sources.publish(runId, event);
    const key = roundKey(runId, iteration);
    const committed = this.#raw.get(key) ?? new Map<string, ToolResult>();
    this.#raw.set(key, committed);
    if (committed.has(result.toolCallId)) return false;
    committed.set(result.toolCallId, { ...result });
    return true;
  }

  async rawResults(runId: string, iteration: number): Promise<Record<string, ToolResult>> {
    return Object.fromEntries(this.#raw.get(roundKey(runId, iteration)) ?? []);
  }

  async markCallStarted(
    runId: string,
    iteration: number,
    callKey: string,
    events: readonly RunEvent[] = [],
  ): Promise<boolean> {
    const marks = this.#marks(runId, iteration);
    if (marks.has(callKey)) return false;
    marks.set(callKey, { started: true });
    for (const event of events) this.#sources.publish(runId, event);
    return true;
  }

  async markCallInterrupted(
    runId: string,
    iteration: number,
    callKey: string,
    reason: string,
  ): Promise<void> {
    this.#marks(runId, iteration).set(callKey, { started: false, reason });
  }

  async interruptedCalls(runId: string, iteration: number): Promise<Map<string, string>> {
    const marks = this.#inFlight.get(roundKey(runId, iteration)) ?? new Map<string, CallMark>();
    const waiting = new Map<string, string>();
    for (const [key, mark] of marks) if (!mark.started) waiting.set(key, mark.reason);
    return waiting;
  }

  async decide(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    check?: (record: RunRecord | undefined) => void,
  ): Promise<boolean> {
    // Synchronous from here to the write: nothing changes the record in between.
    check?.(this.#sources.record(runId));
    const key = roundKey(runId, iteration);
    const recorded = this.#decisions.get(key) ?? new Map<string, string>();
    this.#decisions.set(key, recorded);
    const existing = recorded.get(callKey);
    // The same decision written again (a retried request) still wins, as in Redis.
    if (existing !== undefined)
      return (
        decodeStored(StoredDecision, existing, `A decision of run "${runId}"`).id === decision.id
      );
    recorded.set(callKey, JSON.stringify(decision));
    this.#appendAudit(runId, audit);
    return true;
  }

  #appendAudit(runId: string, audit: DecisionRecord): void {
    const trail = this.#audit.get(runId) ?? [];
    trail.push(JSON.stringify(audit));
    this.#audit.set(runId, trail);
  }

  async decideInQuorum(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    approval: QuorumApproval,
    check?: (record: RunRecord | undefined) => void,
  ): Promise<QuorumOutcome> {
    // Synchronous from here to the write, as `decide`.
    check?.(this.#sources.record(runId));
    const key = roundKey(runId, iteration);
    const existing = this.#decisions.get(key)?.get(callKey);
    if (existing !== undefined) {
      const stored = decodeStored(StoredDecision, existing, `A decision of run "${runId}"`);
      return stored.id === decision.id ? "decided" : "already_decided";
    }
    const counted = this.#quorum.get(key) ?? new Map<string, CountedApproval[]>();
    this.#quorum.set(key, counted);
    const given = counted.get(callKey) ?? [];
    if (given.some((each) => each.id === decision.id)) return "counted";
    if (given.some((each) => each.by === approval.by)) return "repeated";
    const hash = approval.inputHash;
    const agreeing =
      hash === undefined ? 0 : given.filter((each) => each.inputHash === hash).length + 1;
    if (hash !== undefined) {
      counted.set(callKey, [
        ...given,
        {
          id: decision.id,
          by: approval.by,
          at: decision.decidedAt,
          reason: decision.reason ?? null,
          inputHash: hash,
        },
      ]);
      this.#appendAudit(runId, audit);
      if (agreeing < approval.needed) return "counted";
    } else {
      this.#appendAudit(runId, audit);
    }
    this.#decisions.set(
      key,
      (this.#decisions.get(key) ?? new Map()).set(callKey, JSON.stringify(decision)),
    );
    return "decided";
  }

  async quorumApprovals(
    runId: string,
    iteration: number,
  ): Promise<Record<string, GivenApproval[]>> {
    const counted =
      this.#quorum.get(roundKey(runId, iteration)) ?? new Map<string, CountedApproval[]>();
    return Object.fromEntries(
      [...counted].map(([callKey, given]) => [
        callKey,
        given.map(({ by, at, reason }) => ({ by, at, reason })),
      ]),
    );
  }

  async decisions(runId: string, iteration: number): Promise<Record<string, StoredDecision>> {
    const recorded = this.#decisions.get(roundKey(runId, iteration)) ?? new Map<string, string>();
    return Object.fromEntries(
      [...recorded].map(([toolCallId, json]) => [
        toolCallId,
        decodeStored(StoredDecision, json, `A decision of run "${runId}"`),
      ]),
    );
  }

  async auditTrail(runId: string): Promise<DecisionRecord[]> {
    return (this.#audit.get(runId) ?? []).map((json) =>
      decodeStored(DecisionRecord, json, `An audit entry of run "${runId}"`),
    );
  }

  /** Drops the run's working data of iterations 1 … `iterations` (retention, prune). */
  forget(runId: string, iterations: number): void {
    for (let iteration = 1; iteration <= iterations; iteration += 1) {
      const key = roundKey(runId, iteration);
      for (const map of [this.#raw, this.#decisions, this.#inFlight, this.#quorum]) map.delete(key);
    }
  }

  /** Drops the run's audit trail (prune only: it is kept as long as the record). */
  forgetAudit(runId: string): void {
    this.#audit.delete(runId);
  }

  #marks(runId: string, iteration: number): Map<string, CallMark> {
    const key = roundKey(runId, iteration);
    const marks = this.#inFlight.get(key) ?? new Map<string, CallMark>();
    this.#inFlight.set(key, marks);
    return marks;
  }
}
