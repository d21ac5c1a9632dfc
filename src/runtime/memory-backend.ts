import { loggableError } from "../core/errors.js";
import type { ToolResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import { type ExtensionStateStore, memoryExtensionStateStore } from "../extensions/state-store.js";
import type {
  BackendStartOptions,
  CloseOptions,
  EnqueueStepOptions,
  JobDelivery,
  LeaseOutcome,
  OpenedToolCall,
  RunBackend,
  SaveOptions,
  SaveOutcome,
} from "../store/backend.js";
import { queueConcurrency } from "../store/backend.js";
import type { StoredCheckpoint } from "../store/checkpoint.js";
import { decodeCheckpoint, encodeCheckpoint } from "../store/checkpoint-codec.js";
import { BackendError, LeaseLostError } from "../store/errors.js";
import type { ModelLimiter } from "../store/model-limiter.js";
import { decodeStored } from "../store/record-codec.js";
import type { EventPage, NumberedEvent } from "../store/run-feeds.js";
import type { RunPage, RunQuery } from "../store/run-query.js";
import { callKey } from "../store/run-view.js";
import {
  isTerminal,
  type RunRecord,
  type RunRecordStatus,
  type StepJob,
  StoredDecision,
  stepJob,
  type ToolJob,
} from "../store/schemas.js";
import { conversationOf, joinRecord, recordDocument } from "../store/stored-record.js";
import { DecisionRecord, type RunSummary, summarize } from "../store/summary.js";
import { toolCallRun } from "../store/tool-call-view.js";
import { MemoryEventLog } from "./memory-event-log.js";
import { memoryRecorderStore } from "./memory-run-extras.js";
import { MemoryRunIndex } from "./memory-run-index.js";
import { MemoryWorkQueue } from "./memory-work-queue.js";
import { memoryModelLimiter } from "./model-limiter.js";
import { SummaryFeed } from "./summary-feed.js";

export interface MemoryBackendOptions {
  /**
   * How long a run's lease lasts without renewal.
   * @defaultValue 30000
   */
  lockDurationMs?: number;
  /**
   * Events kept per run.
   * @defaultValue 1000
   */
  maxEventsPerRun?: number;
  /**
   * How long a finished run's per-run data (raw results, decisions, in-flight markers,
   * fencing, cancel and wake-up flags, events) is kept; its record stays.
   * @defaultValue 86400000 (24 h)
   */
  retentionMs?: number;
}

interface Lease {
  token: number;
  expiresAt: number;
}

const roundKey = (runId: string, iteration: number) => `${runId}\u0000${iteration}`;

/** A call attempt's in-flight mark: its handler started, or it waits for a person (and why). */
type CallMark = { started: true } | { started: false; reason: string };

/**
 * The embedded backend: runs, leases and queues in this process's memory, no servers. The
 * default of `AgentRuntime`; the same contract as `redisBackend()`, without durability.
 * @example
 * const runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend() });
 */
export function memoryBackend(options: MemoryBackendOptions = {}): RunBackend {
  return new MemoryBackend(options);
}

class MemoryBackend implements RunBackend {
  readonly kind = "memory" as const;
  /** Appends and saves apply their events as they are called. */
  readonly publishesInOrder = true;
  readonly lockDurationMs: number;
  readonly retentionMs: number;
  readonly extensionState: ExtensionStateStore = memoryExtensionStateStore();
  readonly recordings = memoryRecorderStore();
  // Records are kept as JSON so that no caller shares objects with the store.
  readonly #records = new Map<string, StoredRun>();
  readonly #runIndex = new MemoryRunIndex();
  /** Audit trails by run: each decision's JSON, oldest first. Not expired with the run's data. */
  readonly #audit = new Map<string, string[]>();
  readonly #leases = new Map<string, Lease>();
  readonly #fences = new Map<string, number>();
  readonly #wakes = new Set<string>();
  readonly #raw = new Map<string, Map<string, ToolResult>>();
  readonly #decisions = new Map<string, Map<string, string>>();
  /** In-flight marks by round, then call key. */
  readonly #inFlight = new Map<string, Map<string, CallMark>>();
  /** Retention timers of finished runs. */
  readonly #expiries = new Map<string, NodeJS.Timeout>();
  readonly #cancels = new Set<string>();
  readonly #events: MemoryEventLog;
  /** Every created or saved run's summary, for `watchRuns`. */
  readonly #changes = new SummaryFeed();
  readonly #steps = new MemoryWorkQueue<StepJob>();
  readonly #tools = new MemoryWorkQueue<ToolJob>();
  readonly #limiter = memoryModelLimiter();
  #onCancel: ((runId: string) => void) | undefined;
  #closed = false;

  constructor(options: MemoryBackendOptions) {
    this.lockDurationMs = options.lockDurationMs ?? 30_000;
    this.retentionMs = options.retentionMs ?? 86_400_000;
    this.#events = new MemoryEventLog(options.maxEventsPerRun ?? 1000);
  }

  async start(options: BackendStartOptions): Promise<void> {
    const { processors } = options;
    if (processors === undefined) return;
    this.#onCancel = options.onCancel;
    const { logger } = options;
    // In memory a job that threw is not retried: it is given up at once, as a Redis job is
    // once its attempts ran out, so that its run does not wait for it forever.
    const failed =
      <T>(queue: string, process: (job: T, delivery: JobDelivery) => Promise<unknown>) =>
      (job: T, error: unknown) => {
        logger.warn({ err: loggableError(error), job, queue }, "job failed");
        const reason = error instanceof Error ? error.message : String(error);
        process(job, { redelivered: true, gaveUp: reason }).catch((failure: unknown) =>
          logger.error({ err: loggableError(failure), job, queue }, "giving a job up failed"),
        );
      };
    const step = processors.step.bind(processors);
    const tool = processors.tool.bind(processors);
    const concurrency = queueConcurrency(options.concurrency);
    this.#steps.work(
      async (job) => {
        await step(job, { redelivered: false });
      },
      concurrency.steps,
      failed("steps", step),
    );
    this.#tools.work(
      async (job) => {
        await tool(job, { redelivered: false });
      },
      concurrency.tools,
      failed("tools", tool),
    );
  }

  async close(options: CloseOptions): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const deadline = Date.now() + options.timeoutMs;
    const stepsDrained = await this.#steps.close(options.timeoutMs);
    const toolsDrained = await this.#tools.close(Math.max(0, deadline - Date.now()));
    if (!stepsDrained || !toolsDrained) options.onDeadline?.();
    this.#events.close();
    for (const timer of this.#expiries.values()) clearTimeout(timer);
    this.#expiries.clear();
  }

  async createRun(record: RunRecord): Promise<boolean> {
    if (this.#records.has(record.runId)) return false;
    this.#records.set(record.runId, {
      document: recordDocument(record),
      messages: conversationOf(record).map((message) => JSON.stringify(message)),
      checkpoints: [],
    });
    const summary = summarize(record);
    this.#runIndex.put(summary);
    this.#changes.emit(summary);
    return true;
  }

  async submitRun(record: RunRecord, options: EnqueueStepOptions = {}): Promise<boolean> {
    return (await this.submitRuns([record], options)).length === 0;
  }

  async loadRun(runId: string): Promise<RunRecord | undefined> {
    return this.#recordOf(runId);
  }

  async openToolCall(
    runId: string,
    iteration: number,
    toolCallId: string,
    markStarted?: string,
  ): Promise<OpenedToolCall> {
    const stored = this.#records.get(runId);
    const run =
      stored === undefined ? undefined : toolCallRun(stored.document, undefined, toolCallId);
    const committed = this.#raw.get(roundKey(runId, iteration))?.has(toolCallId) === true;
    const cancelRequested = this.#cancels.has(runId);
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

  async runStatus(runId: string): Promise<RunRecordStatus | undefined> {
    return this.#recordOf(runId)?.status;
  }

  async listRuns(query: RunQuery): Promise<RunPage> {
    return this.#runIndex.page(query);
  }

  async auditTrail(runId: string): Promise<DecisionRecord[]> {
    return (this.#audit.get(runId) ?? []).map((json) =>
      decodeStored(DecisionRecord, json, `An audit entry of run "${runId}"`),
    );
  }

  async checkpoints(runId: string): Promise<StoredCheckpoint[]> {
    return (this.#records.get(runId)?.checkpoints ?? []).map((json) =>
      decodeCheckpoint(json, `A checkpoint of run "${runId}"`),
    );
  }

  async pruneRuns(finishedBefore: number): Promise<number> {
    const pruned = this.#runIndex.finishedBefore(finishedBefore);
    for (const runId of pruned) {
      const iterations = (await this.loadRun(runId))?.result?.iterations ?? 0;
      clearTimeout(this.#expiries.get(runId));
      this.#expiries.delete(runId);
      this.#dropRunData(runId, iterations);
      this.#events.drop(runId);
      this.recordings.drop(runId);
      this.#records.delete(runId);
      this.#runIndex.remove(runId);
      this.#audit.delete(runId);
    }
    return pruned.length;
  }

  async acquireLease(runId: string): Promise<LeaseOutcome> {
    const now = Date.now();
    const held = this.#leases.get(runId);
    if (held !== undefined && held.expiresAt > now) {
      this.#wakes.add(runId);
      return { acquired: false, remainingMs: held.expiresAt - now };
    }
    const token = (this.#fences.get(runId) ?? 0) + 1;
    this.#fences.set(runId, token);
    this.#leases.set(runId, { token, expiresAt: now + this.lockDurationMs });
    this.#wakes.delete(runId);
    this.#startRunning(runId);
    return { acquired: true, token };
  }

  /** A `queued` run turns `running` as a worker takes its lease (as on Redis). */
  #startRunning(runId: string): void {
    const stored = this.#records.get(runId);
    const record = this.#recordOf(runId);
    if (stored === undefined || record?.status !== "queued") return;
    const running: RunRecord = { ...record, status: "running" };
    stored.document = recordDocument(running);
    const summary = summarize(running);
    this.#runIndex.put(summary);
    this.#changes.emit(summary);
  }

  async renewLease(runId: string, token: number): Promise<boolean> {
    const held = this.#leases.get(runId);
    if (held?.token !== token) return false;
    held.expiresAt = Date.now() + this.lockDurationMs;
    return true;
  }

  async saveRun(
    runId: string,
    token: number,
    record: RunRecord,
    events: readonly RunEvent[] = [],
    storedMessages?: number,
    options: SaveOptions = {},
  ): Promise<SaveOutcome> {
    if (this.#fences.get(runId) !== token) throw new LeaseLostError(runId, token);
    const conversation = conversationOf(record);
    const kept = this.#records.get(runId)?.messages ?? [];
    if (storedMessages !== undefined && storedMessages !== kept.length) {
      throw new BackendError(
        `Run "${runId}" has ${kept.length} stored messages, not ${storedMessages}: refusing a save that would misplace the conversation.`,
      );
    }
    // Appended in place: like the Redis list, a save writes only the new messages.
    const messages = storedMessages === undefined ? [] : kept;
    for (const message of conversation.slice(storedMessages ?? 0)) {
      messages.push(JSON.stringify(message));
    }
    const checkpoints = this.#records.get(runId)?.checkpoints ?? [];
    if (options.checkpoint !== undefined) checkpoints.push(encodeCheckpoint(options.checkpoint));
    this.#records.set(runId, { document: recordDocument(record), messages, checkpoints });
    const summary = summarize(record);
    this.#runIndex.put(summary);
    for (const event of events) this.#events.publish(runId, event);
    this.#changes.emit(summary);
    const released = options.release === true ? await this.releaseLease(runId, token) : undefined;
    if (released === undefined) await this.renewLease(runId, token);
    const cancelRequested = this.#cancels.has(runId);
    if (isTerminal(record.status)) this.#expireLater(runId, record.result?.iterations ?? 0);
    for (const job of options.thenTools ?? []) await this.enqueueTool(job);
    return { cancelRequested, ...(released === undefined ? {} : { released }) };
  }

  async releaseLease(runId: string, token: number): Promise<{ wake: boolean }> {
    if (this.#leases.get(runId)?.token === token) this.#leases.delete(runId);
    const wake = this.#wakes.delete(runId);
    return { wake };
  }

  async commitRaw(
    runId: string,
    iteration: number,
    result: ToolResult,
    events: readonly RunEvent[] = [],
  ): Promise<boolean> {
    for (const event of events) this.#events.publish(runId, event);
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
    for (const event of events) this.#events.publish(runId, event);
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
    check?.(this.#recordOf(runId));
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
    const trail = this.#audit.get(runId) ?? [];
    trail.push(JSON.stringify(audit));
    this.#audit.set(runId, trail);
    return true;
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

  async requestCancel(runId: string): Promise<void> {
    this.#cancels.add(runId);
    this.#onCancel?.(runId);
  }

  async cancelRequested(runId: string): Promise<boolean> {
    return this.#cancels.has(runId);
  }

  async publish(runId: string, events: RunEvent | readonly RunEvent[]): Promise<void> {
    for (const event of Array.isArray(events) ? events : [events]) {
      this.#events.publish(runId, event as RunEvent);
    }
  }

  // Takes no `live` hint: here a stream listens as soon as it reads.
  async *events(runId: string): AsyncGenerator<RunEvent> {
    if (!this.#events.has(runId)) {
      // A finished run without a log (none was ever written) has only its final result.
      const record = await this.loadRun(runId);
      if (record !== undefined && isTerminal(record.status) && record.result !== null) {
        yield { type: "result", result: record.result };
        return;
      }
    }
    yield* this.#events.read(runId);
  }

  async *followEvents(runId: string, after: number): AsyncGenerator<NumberedEvent> {
    if (!this.#events.has(runId)) {
      const record = await this.loadRun(runId);
      if (record !== undefined && isTerminal(record.status) && record.result !== null) {
        if (after === 0) yield { position: 0, event: { type: "result", result: record.result } };
        return;
      }
    }
    yield* this.#events.readFrom(runId, after);
  }

  async readEvents(runId: string, after: number, limit: number): Promise<EventPage> {
    if (!this.#events.has(runId) && after === 0) {
      const record = await this.loadRun(runId);
      if (record !== undefined && isTerminal(record.status) && record.result !== null) {
        return { events: [{ type: "result", result: record.result }], next: 1 };
      }
    }
    return this.#events.page(runId, after, limit);
  }

  async watchRuns(signal: AbortSignal): Promise<AsyncIterable<RunSummary>> {
    return this.#changes.listen(signal);
  }

  async enqueueStep(runId: string, options: EnqueueStepOptions = {}): Promise<void> {
    const { giveUp, delayMs, priority, jobId, ...extra } = options;
    this.#steps.add(
      stepJob(runId, giveUp, { ...extra, ...(priority === undefined ? {} : { priority }) }),
      {
        ...(delayMs === undefined ? {} : { delayMs }),
        ...(priority === undefined ? {} : { priority }),
        ...(jobId === undefined ? {} : { key: jobId }),
      },
    );
  }

  async submitRuns(
    records: readonly RunRecord[],
    options: EnqueueStepOptions = {},
  ): Promise<string[]> {
    const existing: string[] = [];
    for (const record of records) {
      if (!(await this.createRun(record))) {
        existing.push(record.runId);
        continue;
      }
      const priority = record.priority === undefined ? {} : { priority: record.priority };
      await this.enqueueStep(record.runId, { ...options, ...priority });
    }
    return existing;
  }

  async enqueueTool(job: ToolJob): Promise<void> {
    const key = callKey({ call: { id: job.toolCallId }, interruptions: job.attempt });
    this.#tools.add(
      { ...job },
      {
        key: JSON.stringify([job.runId, job.iteration, key]),
        ...(job.priority === undefined ? {} : { priority: job.priority }),
      },
    );
  }

  modelLimiter(): ModelLimiter {
    return this.#limiter;
  }

  #recordOf(runId: string): RunRecord | undefined {
    const stored = this.#records.get(runId);
    return stored === undefined ? undefined : joinRecord(stored.document, stored.messages);
  }

  #marks(runId: string, iteration: number): Map<string, CallMark> {
    const key = roundKey(runId, iteration);
    const marks = this.#inFlight.get(key) ?? new Map<string, CallMark>();
    this.#inFlight.set(key, marks);
    return marks;
  }

  /** Drops a finished run's per-run data after the retention period; the record stays. */
  #expireLater(runId: string, iterations: number): void {
    clearTimeout(this.#expiries.get(runId));
    const timer = setTimeout(() => {
      this.#expiries.delete(runId);
      this.#dropRunData(runId, iterations);
    }, this.retentionMs);
    timer.unref();
    this.#expiries.set(runId, timer);
  }

  /**
   * Drops a run's working data: all but its record, conversation, summary, index entries,
   * audit trail and event log.
   */
  #dropRunData(runId: string, iterations: number): void {
    for (const map of [this.#fences, this.#leases]) map.delete(runId);
    for (const set of [this.#wakes, this.#cancels]) set.delete(runId);
    for (let iteration = 1; iteration <= iterations; iteration += 1) {
      const key = roundKey(runId, iteration);
      for (const map of [this.#raw, this.#decisions, this.#inFlight]) map.delete(key);
    }
  }
}

/** A run as kept: the record without its conversation, and the conversation's messages. */
interface StoredRun {
  document: string;
  messages: string[];
  /** The JSON of each `StoredCheckpoint` its saves appended. */
  checkpoints: string[];
}
