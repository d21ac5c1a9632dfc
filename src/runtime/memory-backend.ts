import type {
  BackendLifecycle,
  BackendStartOptions,
  CloseOptions,
  RunBackend,
} from "../store/backend.js";
import { composeBackend } from "./compose-backend.js";
import { MemoryCallLedger } from "./memory/call-ledger.js";
import { MemoryEventLog } from "./memory/event-log.js";
import { MemoryJobQueue } from "./memory/job-queue.js";
import { MemoryLeases } from "./memory/leases.js";
import { MemoryRunStore } from "./memory/run-store.js";
import { MemoryRunTree } from "./memory/run-tree.js";

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

/**
 * The embedded backend: runs, leases and queues in this process's memory, no servers. The
 * default of `AgentRuntime`; the same contract as `redisBackend()`, without durability.
 * @example
 * const runtime = new AgentRuntime({ agents: [agent], backend: memoryBackend() });
 */
export function memoryBackend(options: MemoryBackendOptions = {}): RunBackend {
  const retentionMs = options.retentionMs ?? 86_400_000;
  const store = new MemoryRunStore();
  const leases = new MemoryLeases({
    lockDurationMs: options.lockDurationMs ?? 30_000,
    onAcquired: (runId) => store.startRunning(runId),
  });
  const events = new MemoryEventLog({
    maxEventsPerRun: options.maxEventsPerRun ?? 1000,
    loadRun: (runId) => store.loadRun(runId),
  });
  const ledger = new MemoryCallLedger({
    document: (runId) => store.documentOf(runId),
    lastMessage: (runId) => store.lastMessageOf(runId),
    record: (runId) => store.recordOf(runId),
    cancelled: (runId) => leases.isCancelled(runId),
    publish: (runId, event) => events.append(runId, event),
  });
  const jobs = new MemoryJobQueue({ createRun: (record) => store.createRun(record) });
  const tree = new MemoryRunTree({
    fences: (runId, token) => leases.fences(runId, token),
    commit: (...args) => ledger.commitRaw(...args),
    stored: (runId) => store.has(runId),
  });
  const retention = new Retention(retentionMs, (runId, iterations) => {
    leases.forget(runId);
    ledger.forget(runId, iterations);
  });
  store.connect({
    leases,
    ledger,
    events,
    enqueueTool: (job) => jobs.enqueueTool(job),
    expireLater: (runId, iterations) => retention.expireLater(runId, iterations),
    forgetExpiry: (runId) => retention.cancel(runId),
    forgetInTree: (runId) => tree.forget(runId),
    linked: (runId) => tree.linked(runId),
  });
  let closed = false;
  const lifecycle: BackendLifecycle = {
    kind: "memory",
    retentionMs,
    async start(startOptions: BackendStartOptions) {
      const { processors } = startOptions;
      if (processors === undefined) return;
      leases.listenForCancel(startOptions.onCancel);
      jobs.work(processors, startOptions.concurrency, startOptions.logger);
    },
    async close(closeOptions: CloseOptions) {
      if (closed) return;
      closed = true;
      if (!(await jobs.close(closeOptions.timeoutMs))) closeOptions.onDeadline?.();
      events.close();
      retention.close();
    },
  };
  return composeBackend({
    lifecycle,
    store,
    leases,
    ledger,
    events,
    jobs,
    tree,
  });
}

/** Drops a finished run's working data once `retentionMs` has passed; its record stays. */
class Retention {
  readonly #retentionMs: number;
  readonly #drop: (runId: string, iterations: number) => void;
  /** Retention timers of finished runs. */
  readonly #expiries = new Map<string, NodeJS.Timeout>();

  constructor(retentionMs: number, drop: (runId: string, iterations: number) => void) {
    this.#retentionMs = retentionMs;
    this.#drop = drop;
  }

  expireLater(runId: string, iterations: number): void {
    clearTimeout(this.#expiries.get(runId));
    const timer = setTimeout(() => {
      this.#expiries.delete(runId);
      this.#drop(runId, iterations);
    }, this.#retentionMs);
    timer.unref();
    this.#expiries.set(runId, timer);
  }

  cancel(runId: string): void {
    clearTimeout(this.#expiries.get(runId));
    this.#expiries.delete(runId);
  }

  close(): void {
    for (const timer of this.#expiries.values()) clearTimeout(timer);
    this.#expiries.clear();
  }
}
