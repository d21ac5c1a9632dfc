import type { Queue } from "bullmq";
import type { RunBackend } from "../store/backend.js";

/** One of a backend's BullMQ queues, for queue views such as bull-board. */
export interface BackendQueue {
  role: "steps" | "tools";
  /** The backend's key prefix (two backends on one Redis differ in it). */
  prefix: string;
  queue: Queue;
}

/** A backend whose runs' jobs go through BullMQ queues (`redisBackend()`). */
export interface QueuedBackend extends RunBackend {
  /** The BullMQ queues the runs' jobs go through, once started. */
  queues(): BackendQueue[];
}

/** The BullMQ queues of `backend`, once started (none in memory). */
export function backendQueues(backend: RunBackend): BackendQueue[] {
  const queued = backend as Partial<QueuedBackend>;
  return typeof queued.queues === "function" ? queued.queues() : [];
}
