import { z } from "zod";
import { randomUUID } from "../../core/node-crypto.js";
import { type GivenApproval, ToolResult } from "../../core/values.js";
import type { RunEvent } from "../../engine/run-events.js";
import type {
  CallLedger,
  OpenedToolCall,
  QuorumApproval,
  QuorumOutcome,
} from "../../store/call-ledger.js";
import { BackendError } from "../../store/errors.js";
import { decodeStored } from "../../store/record/codec.js";
import { type RunRecord, StoredDecision } from "../../store/schemas.js";
import { DecisionRecord } from "../../store/summary.js";
import { toolCallRun } from "../../store/tool-call-view.js";
import { DECIDE } from "../redis-index-scripts.js";
import { callField, callKeyOfField } from "../redis-keys.js";
import { COMMIT_RAW, MARK_STARTED, OPEN_TOOL_CALL } from "../redis-scripts.js";
import { checkedRecordFingerprint } from "./checked-record.js";
import type { RedisContext } from "./context.js";
import { decideInQuorum, quorumApprovals } from "./quorum.js";
import { INTERRUPTED, parseOpenToolCallReply, STARTED, storedSummary } from "./replies.js";

/** How often a decision is checked again when the run's record changed meanwhile. */
const MAX_DECIDE_ATTEMPTS = 5;

/**
 * The call ledger in Redis: per run and iteration, a hash of raw results, one of in-flight
 * marks and one of decisions (all expired with the run's working data), and the run's audit
 * list (kept as long as its record).
 */
export class RedisCallLedger implements CallLedger {
  readonly #context: RedisContext;

  constructor(context: RedisContext) {
    this.#context = context;
  }

  async openToolCall(
    runId: string,
    iteration: number,
    toolCallId: string,
    markStarted?: string,
  ): Promise<OpenedToolCall> {
    const { redis, keys, marker, where } = this.#context;
    // Unique per call: a reply lost and re-sent by ioredis finds our own mark.
    const mark = markStarted === undefined ? "" : `${STARTED}:${randomUUID()}`;
    const [document, summary, committed, cancelled, started, length, last] = parseOpenToolCallReply(
      await OPEN_TOOL_CALL.run(
        redis,
        [
          keys.run(runId),
          keys.raw(runId, iteration),
          keys.cancel(runId),
          keys.inFlight(runId, iteration),
          keys.messages(runId),
        ],
        [callField(toolCallId), markStarted === undefined ? "" : callField(markStarted), mark],
      ),
    );
    if (document === "") await marker.assertKept(where);
    return {
      run:
        document === ""
          ? undefined
          : toolCallRun(
              document,
              storedSummary(runId, summary),
              toolCallId,
              length === 0 ? undefined : { at: length - 1, json: last },
            ),
      committed: committed === 1,
      cancelRequested: cancelled === 1,
      ...(started === "" ? {} : { started: started === 1 || started === mark }),
    };
  }

  async commitRaw(
    runId: string,
    iteration: number,
    result: ToolResult,
    events: readonly RunEvent[] = [],
  ): Promise<boolean> {
    const { stepRedis, keys, maxEvents } = this.#context;
    const won = await this.#context.beforeSteps(
      runId,
      COMMIT_RAW.run(
        stepRedis,
        [keys.raw(runId, iteration), keys.events(runId), keys.run(runId)],
        [
          callField(result.toolCallId),
          JSON.stringify(result),
          maxEvents,
          ...events.map((event) => JSON.stringify(event)),
        ],
      ),
    );
    return won === 1;
  }

  async rawResults(runId: string, iteration: number): Promise<Record<string, ToolResult>> {
    const { redis, keys } = this.#context;
    const stored = await redis.hgetall(keys.raw(runId, iteration));
    return Object.fromEntries(
      Object.entries(stored).map(([field, json]) => [
        callKeyOfField(field),
        decodeStored(ToolResult, json, `A raw result of run "${runId}"`),
      ]),
    );
  }

  async markCallStarted(
    runId: string,
    iteration: number,
    callKey: string,
    events: readonly RunEvent[] = [],
  ): Promise<boolean> {
    const { redis, keys, maxEvents } = this.#context;
    // Unique per call: a reply lost and re-sent by ioredis finds our own mark.
    const mark = `${STARTED}:${randomUUID()}`;
    const reply = await MARK_STARTED.run(
      redis,
      [keys.inFlight(runId, iteration), keys.events(runId), keys.run(runId)],
      [callField(callKey), mark, maxEvents, ...events.map((event) => JSON.stringify(event))],
    );
    return reply === 1 || reply === mark;
  }

  async markCallInterrupted(
    runId: string,
    iteration: number,
    callKey: string,
    reason: string,
  ): Promise<void> {
    const { stepRedis, keys } = this.#context;
    await this.#context.beforeSteps(
      runId,
      stepRedis.hset(
        keys.inFlight(runId, iteration),
        callField(callKey),
        `${INTERRUPTED}${reason}`,
      ),
    );
  }

  async interruptedCalls(runId: string, iteration: number): Promise<Map<string, string>> {
    const { redis, keys } = this.#context;
    const marks = await redis.hgetall(keys.inFlight(runId, iteration));
    const waiting = new Map<string, string>();
    for (const [key, mark] of Object.entries(marks)) {
      if (mark.startsWith(INTERRUPTED)) {
        waiting.set(callKeyOfField(key), mark.slice(INTERRUPTED.length));
      }
    }
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
    const { redis, keys } = this.#context;
    let reply: unknown;
    for (let attempt = 1; ; attempt++) {
      const checked = await checkedRecordFingerprint(this.#context, runId, check);
      // The script writes only while the record is still the one checked.
      reply = await DECIDE.run(
        redis,
        [keys.decisions(runId, iteration), keys.audit(runId), keys.run(runId)],
        [callField(callKey), JSON.stringify(decision), JSON.stringify(audit), checked],
      );
      if (reply !== -1) break;
      if (attempt === MAX_DECIDE_ATTEMPTS) {
        throw new BackendError(
          `Run "${runId}" kept changing while a decision on it was recorded; nothing was recorded.`,
        );
      }
    }
    if (reply === 1) return true;
    // A reply lost and re-sent by ioredis answers with our own write: compare the stored id.
    const stored = z.string().parse(reply);
    return decodeStored(StoredDecision, stored, `A decision of run "${runId}"`).id === decision.id;
  }

  decideInQuorum(
    runId: string,
    iteration: number,
    callKey: string,
    decision: StoredDecision,
    audit: DecisionRecord,
    approval: QuorumApproval,
    check?: (record: RunRecord | undefined) => void,
  ): Promise<QuorumOutcome> {
    return decideInQuorum(this.#context, {
      runId,
      iteration,
      callKey,
      decision,
      audit,
      approval,
      check,
    });
  }

  quorumApprovals(runId: string, iteration: number): Promise<Record<string, GivenApproval[]>> {
    return quorumApprovals(this.#context, runId, iteration);
  }

  async decisions(runId: string, iteration: number): Promise<Record<string, StoredDecision>> {
    const { redis, keys } = this.#context;
    const stored = await redis.hgetall(keys.decisions(runId, iteration));
    return Object.fromEntries(
      Object.entries(stored).map(([field, json]) => [
        callKeyOfField(field),
        decodeStored(StoredDecision, json, `A decision of run "${runId}"`),
      ]),
    );
  }

  async auditTrail(runId: string): Promise<DecisionRecord[]> {
    const { redis, keys } = this.#context;
    const entries = await redis.lrange(keys.audit(runId), 0, -1);
    return entries.map((json) =>
      decodeStored(DecisionRecord, json, `An audit entry of run "${runId}"`),
    );
  }
}
