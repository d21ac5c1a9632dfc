// harnessx/backend: the run store's roles, for whoever writes or wraps a backend. Not part of
// `harnessx` itself: these interfaces change with the runtime's internals.

export type { BackendQueue } from "./runtime/backend-queue.js";
export type {
  BackendLifecycle,
  BackendRoles,
  BackendStartOptions,
  CloseOptions,
  RunBackend,
} from "./store/backend.js";
export type { CallLedger, OpenedToolCall } from "./store/call-ledger.js";
export type { EventLog } from "./store/event-log.js";
export type {
  EnqueueStepOptions,
  JobDelivery,
  JobProcessors,
  JobQueue,
  QueueConcurrency,
} from "./store/job-queue.js";
export type { HeldToken, LeaseOutcome, Leases, OpenedRun } from "./store/leases.js";
export type { RunStore, SaveOptions, SaveOutcome } from "./store/run-store.js";
export type { RunLink, RunTree } from "./store/run-tree.js";
