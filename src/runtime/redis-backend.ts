import { hostname } from "node:os";
import { ConfigError, loggableError } from "../core/errors.js";
import type {
  BackendLifecycle,
  BackendStartOptions,
  CloseOptions,
  RunBackend,
} from "../store/backend.js";
import { describeIssues } from "../tools/validate.js";
import type { QueuedBackend } from "./backend-queue.js";
import { ComposedBackend } from "./compose-backend.js";
import { RedisCallLedger } from "./redis/call-ledger.js";
import { RedisContext } from "./redis/context.js";
import { RedisEventLog } from "./redis/event-log.js";
import { RedisJobQueue } from "./redis/job-queue.js";
import { RedisLeases } from "./redis/leases.js";
import { ClusterReadyOptions, type RedisBackendOptions } from "./redis/options.js";
import { RedisRunStore } from "./redis/run-store.js";
import { RedisRunTree } from "./redis/run-tree.js";
import { checkEvictionPolicy, connectWithin } from "./redis/server-checks.js";
import { reportingUnavailable } from "./redis-failures.js";
import { LuaScript } from "./redis-scripts.js";
import { warnUnlessPersistent } from "./redis-store-marker.js";

export type { RedisBackendOptions } from "./redis/options.js";

/**
 * The distributed backend: run records, leases, decisions and run events in Redis, work on
 * BullMQ queues. Any number of processes with the same agents and prefix share the runs.
 * @example
 * const backend = redisBackend({ url: "redis://127.0.0.1:6379", prefix: "hx" });
 * const onCluster = redisBackend({ cluster: [{ host: "10.0.0.1", port: 6379 }], prefix: "{hx}" });
 */
export function redisBackend(options: RedisBackendOptions = {}): RunBackend {
  const parsed = ClusterReadyOptions.safeParse(options);
  if (!parsed.success) {
    throw new ConfigError(`Invalid redisBackend options: ${describeIssues(parsed.error.issues)}`);
  }
  const context = new RedisContext(options);
  const jobs: RedisJobQueue = new RedisJobQueue(
    context,
    {
      stalledIntervalMs: options.stalledIntervalMs ?? context.lockDurationMs,
      maxStalledCount: options.maxStalledCount ?? 3,
      keepCompleted: options.keepCompletedJobs ?? 1000,
      keepFailed: options.keepFailedJobs ?? 5000,
      workerName: options.workerName ?? `${hostname()}-${process.pid}`,
      reconcileIntervalMs: options.reconcileIntervalMs ?? 60_000,
      strandedAfterMs: options.strandedAfterMs ?? 300_000,
    },
    (record) => store.createRun(record),
  );
  const store: RedisRunStore = new RedisRunStore(context, (job) => jobs.enqueueTool(job));
  const events = new RedisEventLog(context, (runId) => store.loadRun(runId));
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const lifecycle: BackendLifecycle = {
    kind: "redis",
    retentionMs: context.retentionMs,
    async start(startOptions: BackendStartOptions) {
      context.logger = startOptions.logger;
      await connectWithin(context, connectTimeoutMs);
      await checkEvictionPolicy(context);
      await warnUnlessPersistent(context.redis, context.logger, context.where);
      await context.marker.open();
      // Without it, every first call would be refused (NOSCRIPT) and sent again in full.
      await LuaScript.loadAll(context.redis).catch((error: unknown) =>
        context.logger.debug({ err: loggableError(error) }, "could not preload the scripts"),
      );
      await jobs.start(startOptions);
    },
    async close(closeOptions: CloseOptions) {
      if (context.closed) return;
      context.closed = true;
      await jobs.closeWorkers(closeOptions);
      events.close();
      store.close();
      await jobs.closeQueues();
      if (context.ownsConnection) {
        await Promise.all(
          [context.redis, context.queueRedis].map((redis) =>
            redis.quit().catch(() => redis.disconnect()),
          ),
        );
      }
    },
  };
  const backend = new RedisBackend({
    lifecycle,
    store,
    leases: new RedisLeases(context),
    ledger: new RedisCallLedger(context),
    events,
    jobs,
    tree: new RedisRunTree(context),
  });
  const timeoutMs = options.commandTimeoutMs ?? 5000;
  return reportingUnavailable<QueuedBackend>(
    backend,
    () => `${context.where} did not answer within ${timeoutMs} ms (commandTimeoutMs).`,
  );
}

/** The composed Redis backend, with its BullMQ queues for queue views. */
class RedisBackend extends ComposedBackend implements QueuedBackend {
  readonly #jobs: RedisJobQueue;

  constructor(roles: ConstructorParameters<typeof ComposedBackend>[0] & { jobs: RedisJobQueue }) {
    super(roles);
    this.#jobs = roles.jobs;
  }

  queues() {
    return this.#jobs.queues();
  }
}
