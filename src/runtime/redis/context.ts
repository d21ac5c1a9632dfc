import type { Queue } from "bullmq";
import type { Logger } from "pino";
import { silentLogger } from "../../core/default-logger.js";
import { loggableError } from "../../core/errors.js";
import { BackendError } from "../../store/errors.js";
import type { RunRecord } from "../../store/schemas.js";
import type { RunSummary } from "../../store/summary.js";
import { coalesceWrites } from "../coalesced-writes.js";
import { Cluster } from "../load-ioredis.js";
import { PauseWatch } from "../model-pauses.js";
import {
  connectRedis,
  describeTarget,
  type RedisClient,
  type RedisTarget,
} from "../redis-connection.js";
import { type RedisKeys, redisKeys } from "../redis-keys.js";
import { StoreMarker } from "../redis-store-marker.js";
import type { RedisBackendOptions } from "./options.js";

/** The backend's queues, once started. */
export interface RedisQueues {
  steps: Queue;
  tools: Queue;
  maintenance: Queue;
}

/**
 * What the Redis backend's roles share: settings, connections, keys, the store marker, and the
 * order between a run's writes and the jobs queued after them (`beforeSteps`).
 */
export class RedisContext {
  /** Where Redis is, for messages: "Redis at <url>" or "Redis Cluster at <nodes>". */
  readonly where: string;
  readonly prefix: string;
  readonly keys: RedisKeys;
  readonly lockDurationMs: number;
  readonly retentionMs: number;
  readonly maxEvents: number;
  readonly ownsConnection: boolean;
  /**
   * Run-store commands: the commands of concurrent jobs share writes (coalesced; auto-pipelined
   * on a cluster).
   */
  readonly redis: RedisClient;
  /** BullMQ's queues: a plain connection, as BullMQ expects (its writes coalesced). */
  readonly queueRedis: RedisClient;
  /** Where the writes go that a run's next step must see (`beforeSteps`). */
  readonly stepRedis: RedisClient;
  readonly marker: StoreMarker;
  /** Model pauses, heard by the control subscriber of a process with workers. */
  readonly pauses: PauseWatch;
  /** The summary each record was last saved with, for its job's return value. */
  readonly summaries = new WeakMap<RunRecord, RunSummary>();
  /**
   * The tree link (`RunLink` JSON, "" for a root) each record saved finished was saved beside,
   * read by that save: the step that finished the run asks for it next (`wakeParent`).
   */
  readonly finishedLinks = new WeakMap<RunRecord, string>();
  logger: Logger = silentLogger();
  queues: RedisQueues | undefined;
  closed = false;
  /** Writes a run's next step must see, under way on a cluster, by run. */
  readonly #stepWrites = new Map<string, Promise<void>>();

  constructor(options: RedisBackendOptions) {
    const target: RedisTarget =
      options.cluster === undefined
        ? { url: options.url ?? "redis://127.0.0.1:6379" }
        : { cluster: options.cluster };
    const onCluster = "cluster" in target || options.connection instanceof Cluster;
    this.where =
      options.connection instanceof Cluster && options.cluster === undefined
        ? "the given Redis Cluster"
        : describeTarget(target);
    this.prefix = options.prefix ?? (onCluster ? "{hx}" : "hx");
    this.keys = redisKeys(this.prefix);
    this.lockDurationMs = options.lockDurationMs ?? 30_000;
    this.retentionMs = options.retentionMs ?? 86_400_000;
    this.maxEvents = options.maxEventsPerRun ?? 1000;
    this.ownsConnection = options.connection === undefined;
    const connect = (autoPipelining: boolean): RedisClient =>
      connectRedis(target, {
        connectionName: options.connectionName ?? "harnessx",
        autoPipelining,
        commandTimeoutMs: options.commandTimeoutMs ?? 5000,
      });
    // On one Redis, both connections send what is issued together in one write
    // (`coalesceWrites`); a cluster's client auto-pipelines by node instead.
    this.redis = options.connection ?? connect(onCluster);
    this.queueRedis = options.connection ?? connect(false);
    if (this.ownsConnection) {
      if (!onCluster) coalesceWrites(this.redis);
      coalesceWrites(this.queueRedis);
    }
    this.stepRedis = onCluster ? this.redis : this.queueRedis;
    for (const redis of new Set([this.redis, this.queueRedis])) {
      redis.on("error", (error) => this.logger.warn({ err: loggableError(error) }, "redis error"));
    }
    this.marker = new StoreMarker(this.redis, this.keys.store);
    this.pauses = new PauseWatch(this.redis, this.keys.pauseChannel);
  }

  /**
   * True when a step job added after a write on `stepRedis` is sent is applied after that
   * write: both go on one connection (one Redis, not a cluster).
   */
  get stepsFollowWrites(): boolean {
    return this.stepRedis === this.queueRedis && !(this.redis instanceof Cluster);
  }

  /**
   * A write that the run's next jobs must see (`saveRun`, `commitRaw`, `markCallInterrupted`):
   * a job queued after it is issued is added after it is applied. On one Redis it goes on the
   * queue connection, ahead of the add; on a cluster the add waits for it and for the run's
   * writes before it.
   */
  beforeSteps<T>(runId: string, write: Promise<T>): Promise<T> {
    if (this.stepsFollowWrites) return write;
    const ignore = () => undefined;
    const earlier = this.#stepWrites.get(runId);
    const settled = Promise.all([earlier, write]).then(ignore, ignore);
    this.#stepWrites.set(runId, settled);
    void settled.then(() => {
      if (this.#stepWrites.get(runId) === settled) this.#stepWrites.delete(runId);
    });
    return write;
  }

  /** The run's writes a job queued now must wait for (none on one Redis). */
  writesBefore(runId: string): Promise<void> | undefined {
    return this.#stepWrites.get(runId);
  }

  queue(name: keyof RedisQueues): Queue {
    if (this.queues === undefined) {
      throw new BackendError("The Redis backend is not started: call runtime.start() first.");
    }
    return this.queues[name];
  }
}
