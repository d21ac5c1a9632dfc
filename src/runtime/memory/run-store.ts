import { memoryExtensionStateStore, type SessionStateStore } from "../../extensions/state-store.js";
import { childStartedOf } from "../../store/child-started.js";
import { conversationOf } from "../../store/conversation.js";
import { BackendError, LeaseLostError } from "../../store/errors.js";
import type { Overview, OverviewQuery } from "../../store/overview.js";
import { joinRecord } from "../../store/record/decode.js";
import { recordDocument } from "../../store/record/encode.js";
import type { RunPage, RunQuery } from "../../store/run-query.js";
import type {
  DeleteOutcome,
  PruneOutcome,
  RunStore,
  SaveOptions,
  SaveOutcome,
} from "../../store/run-store.js";
import {
  isTerminal,
  type RunRecord,
  type RunRecordStatus,
  type ToolJob,
} from "../../store/schemas.js";
import { type RunSummary, summarize } from "../../store/summary.js";
import type { LastMessage } from "../../store/tool-call-view.js";
import { SummaryFeed } from "../summary-feed.js";
import type { MemoryCallLedger } from "./call-ledger.js";
import type { MemoryEventLog } from "./event-log.js";
import { flat } from "./flat.js";
import type { MemoryLeases } from "./leases.js";
import { MemoryRunIndex } from "./run-index.js";

/** A run as kept: the record without its conversation, and the conversation's messages. */
interface StoredRun {
  document: string;
  messages: string[];
}

/** The roles a save writes to besides the store, in the same (synchronous) step. */
export interface MemoryStoreParts {
  leases: MemoryLeases;
  ledger: MemoryCallLedger;
  events: MemoryEventLog;
  enqueueTool: (job: ToolJob) => Promise<void>;
  /** Drops a finished run's working data once its retention is over. */
  expireLater: (runId: string, iterations: number) => void;
  /** Cancels that expiry (the run is pruned). */
  forgetExpiry: (runId: string) => void;
  /** Drops the run's link and its places in its tree (the run is pruned). */
  forgetInTree: (runId: string) => void;
  /** Whether the run has a link in its tree (`RunTree.linkChild`). */
  linked: (runId: string) => boolean;
}

/** The run store in memory: records kept as JSON (no caller shares objects with it), indexes. */
export class MemoryRunStore implements RunStore {
  readonly extensionState: SessionStateStore = memoryExtensionStateStore();
  readonly #records = new Map<string, StoredRun>();
  readonly #runIndex = new MemoryRunIndex();
  /** Every created or saved run's summary, for `watchRuns`. */
  readonly #changes = new SummaryFeed();
  #parts: MemoryStoreParts | undefined;

  /** Joins the store to the roles its saves write to (they are built after it). */
  connect(parts: MemoryStoreParts): void {
    this.#parts = parts;
  }

  async createRun(record: RunRecord): Promise<boolean> {
    if (this.#records.has(record.runId)) return false;
    const started = childStartedOf(record);
    // A child is stored only while linked: a release that dropped its link stops the start.
    if (started !== undefined && !this.#connected().linked(record.runId)) return false;
    this.#records.set(record.runId, {
      document: flat(recordDocument(record)),
      messages: conversationOf(record).map((message) => flat(JSON.stringify(message))),
    });
    this.#indexAndAnnounce(record);
    // A child is told on its parent's log as it is stored, in the same synchronous step.
    const { parentRunId } = record;
    if (started !== undefined && parentRunId !== undefined && this.#records.has(parentRunId)) {
      this.#connected().events.append(parentRunId, started);
    }
    return true;
  }

  async loadRun(runId: string): Promise<RunRecord | undefined> {
    return this.recordOf(runId);
  }

  async runStatus(runId: string): Promise<RunRecordStatus | undefined> {
    return this.recordOf(runId)?.status;
  }

  async listRuns(query: RunQuery): Promise<RunPage> {
    return this.#runIndex.page(query);
  }

  async overview(query: OverviewQuery): Promise<Overview> {
    return this.#runIndex.overview(query);
  }

  async pruneRuns(finishedBefore: number): Promise<PruneOutcome> {
    const outcome = { deleted: 0, unreadable: 0 };
    for (const runId of this.#runIndex.finishedBefore(finishedBefore)) {
      const record = this.#readable(runId);
      if (record === undefined) outcome.unreadable += 1;
      else {
        this.#forget(runId, record.result?.iterations ?? 0);
        outcome.deleted += 1;
      }
    }
    return outcome;
  }

  async deleteRun(runId: string): Promise<DeleteOutcome> {
    if (!this.#records.has(runId) && !this.#runIndex.has(runId)) return "unknown";
    const record = this.#readable(runId);
    if (record !== undefined && !isTerminal(record.status)) return "unfinished";
    this.#forget(runId, record?.result?.iterations ?? 0);
    return "deleted";
  }

  async deleteSessionState(sessionId: string): Promise<number> {
    return this.extensionState.deleteSession(sessionId);
  }

  /** The run's record, or undefined when it (or its summary) cannot be read. */
  #readable(runId: string): RunRecord | undefined {
    try {
      this.#runIndex.summaryOf(runId);
      return this.recordOf(runId);
    } catch {
      return undefined;
    }
  }

  /** Deletes everything kept for a run. */
  #forget(runId: string, iterations: number): void {
    const parts = this.#connected();
    parts.forgetExpiry(runId);
    parts.leases.forget(runId);
    parts.leases.forgetCanceller(runId);
    parts.ledger.forget(runId, iterations);
    parts.ledger.forgetAudit(runId);
    parts.events.forget(runId);
    parts.forgetInTree(runId);
    this.#records.delete(runId);
    this.#runIndex.remove(runId);
  }

  async saveRun(
    runId: string,
    token: number,
    record: RunRecord,
    options: SaveOptions = {},
  ): Promise<SaveOutcome> {
    const { leases, events, enqueueTool, expireLater } = this.#connected();
    if (!leases.fences(runId, token)) throw new LeaseLostError(runId, token);
    const { storedMessages } = options;
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
      messages.push(flat(JSON.stringify(message)));
    }
    if (options.checkpoint !== undefined) events.appendCheckpoint(runId, options.checkpoint);
    this.#records.set(runId, { document: flat(recordDocument(record)), messages });
    const summary = summarize(record);
    this.#runIndex.put(summary);
    for (const event of options.events ?? []) events.append(runId, event);
    this.#changes.emit(summary);
    const released = options.release === true ? await leases.releaseLease(runId, token) : undefined;
    if (released === undefined) await leases.renewLease(runId, token);
    const cancelRequested = leases.isCancelled(runId);
    if (isTerminal(record.status)) expireLater(runId, record.result?.iterations ?? 0);
    for (const job of options.thenTools ?? []) await enqueueTool(job);
    return { cancelRequested, ...(released === undefined ? {} : { released }) };
  }

  async watchRuns(signal: AbortSignal): Promise<AsyncIterable<RunSummary>> {
    return this.#changes.listen(signal);
  }

  /** The run's record, read at once (inside another role's atomic step). */
  recordOf(runId: string): RunRecord | undefined {
    const stored = this.#records.get(runId);
    return stored === undefined ? undefined : joinRecord(stored.document, stored.messages);
  }

  /** Whether the run is stored. */
  has(runId: string): boolean {
    return this.#records.has(runId);
  }

  /** The run's stored document (its record without the conversation). */
  documentOf(runId: string): string | undefined {
    return this.#records.get(runId)?.document;
  }

  /** The last message of the run's stored conversation, and its index (none when empty). */
  lastMessageOf(runId: string): LastMessage | undefined {
    const messages = this.#records.get(runId)?.messages ?? [];
    const json = messages.at(-1);
    return json === undefined ? undefined : { at: messages.length - 1, json };
  }

  /** A `queued` run turns `running` as a worker takes its lease (as on Redis). */
  startRunning(runId: string): void {
    const stored = this.#records.get(runId);
    const record = this.recordOf(runId);
    if (stored === undefined || record?.status !== "queued") return;
    const running: RunRecord = { ...record, status: "running" };
    stored.document = flat(recordDocument(running));
    this.#indexAndAnnounce(running);
  }

  #indexAndAnnounce(record: RunRecord): void {
    const summary = summarize(record);
    this.#runIndex.put(summary);
    this.#changes.emit(summary);
  }

  #connected(): MemoryStoreParts {
    if (this.#parts === undefined) throw new Error("the memory run store is not connected");
    return this.#parts;
  }
}
