import { z } from "zod";
import { lazySchema } from "../../core/lazy-schema.js";
import { Cluster, Redis } from "../load-ioredis.js";
import { type ClusterNode, hasHashTag } from "../redis-connection.js";

export interface RedisBackendOptions {
  /** @defaultValue "redis://127.0.0.1:6379" (unless `cluster` is given) */
  url?: string;
  /**
   * A Redis Cluster's startup nodes, instead of `url`. Every key then lives in the one hash
   * slot the prefix's hash tag names (see `prefix`).
   */
  cluster?: ClusterNode[];
  /**
   * Namespace of every key (runs, leases, event lists and the BullMQ queues). On a Redis
   * Cluster it must contain a hash tag, such as "{hx}": the run store's scripts and BullMQ's
   * touch several keys at once, which a cluster allows only within one hash slot.
   * @defaultValue "hx" ("{hx}" on a cluster)
   */
  prefix?: string;
  /**
   * How long a crashed worker's job and run lease stay claimed before another worker recovers.
   * @defaultValue 30000
   */
  lockDurationMs?: number;
  /**
   * How often workers look for stalled jobs; an idle worker also looks for new jobs at least
   * this often (at most every 5 s), should a wake-up have gone to a worker that cannot take it.
   * @defaultValue lockDurationMs
   */
  stalledIntervalMs?: number;
  /**
   * An ioredis client (or `Cluster`) to use instead of connecting to `url` or `cluster` (needs
   * `maxRetriesPerRequest: null`); not closed by the backend.
   */
  connection?: Redis | Cluster;
  /** @defaultValue 1000 */
  maxEventsPerRun?: number;
  /**
   * How long a finished run's per-run keys (raw results, decisions, in-flight markers, fencing,
   * cancel and wake-up flags, events) are kept; its record stays.
   * @defaultValue 86400000 (24 h)
   */
  retentionMs?: number;
  /**
   * How many times a job whose worker died is delivered again before it fails (BullMQ's
   * `maxStalledCount`, whose own default of 1 would recover a job from one crash only).
   * @defaultValue 3
   */
  maxStalledCount?: number;
  /**
   * The client name of this backend's connections (`CLIENT LIST`); BullMQ names its blocking
   * worker connections `<prefix>:<queue in base64>`.
   * @defaultValue "harnessx"
   */
  connectionName?: string;
  /** Completed jobs kept per queue. @defaultValue 1000 */
  keepCompletedJobs?: number;
  /** Failed jobs kept per queue. @defaultValue 5000 */
  keepFailedJobs?: number;
  /** How long `start()` waits for Redis to answer. @defaultValue 10000 */
  connectTimeoutMs?: number;
  /**
   * How long a command may wait for Redis (queued while the connection is down, or sent and
   * not answered): past it the runtime call rejects with `BackendError`, `code:
   * "backend_unavailable"`. Does not apply to a given `connection`, which keeps its own settings.
   * @defaultValue 5000
   */
  commandTimeoutMs?: number;
  /**
   * How often the run reconciler looks for stranded runs: runs left `queued` or `running` with
   * no live lease and no save for `strandedAfterMs` (their job was lost, say removed from the
   * queue by hand), and `waiting` parents whose children all finished with no wake-up. It steps
   * each one again (a waiting parent's finished children); one reconciler job runs per prefix,
   * on any process with workers.
   * @defaultValue 60000
   */
  reconcileIntervalMs?: number;
  /** How long an unfinished run without a lease goes unsaved before it counts as stranded. @defaultValue 300000 */
  strandedAfterMs?: number;
  /**
   * This process's workers' name, shown by queue views (`CLIENT LIST`, bull-board) and stored on
   * the jobs they process.
   * @defaultValue "<hostname>-<pid>"
   */
  workerName?: string;
}

const Options = lazySchema(() =>
  z.object({
    url: z.string().min(1).optional(),
    cluster: z
      .array(z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65_535) }))
      .min(1)
      .optional(),
    prefix: z
      .string()
      .min(1)
      .regex(/^[^:]+$/, "must not contain ':'")
      .optional(),
    lockDurationMs: z.number().int().positive().optional(),
    stalledIntervalMs: z.number().int().positive().optional(),
    connection: z.union([z.instanceof(Redis), z.instanceof(Cluster)]).optional(),
    maxEventsPerRun: z.number().int().positive().optional(),
    retentionMs: z.number().int().positive().optional(),
    maxStalledCount: z.number().int().positive().optional(),
    connectionName: z
      .string()
      .regex(/^[!-~]+$/, "must be printable ASCII without spaces")
      .optional(),
    keepCompletedJobs: z.number().int().nonnegative().optional(),
    keepFailedJobs: z.number().int().nonnegative().optional(),
    connectTimeoutMs: z.number().int().positive().optional(),
    commandTimeoutMs: z.number().int().positive().optional(),
    reconcileIntervalMs: z.number().int().positive().optional(),
    strandedAfterMs: z.number().int().positive().optional(),
    workerName: z
      .string()
      .regex(/^[!-~]+$/, "must be printable ASCII without spaces")
      .optional(),
  }),
);

/** What a Redis Cluster asks of the options on top of each one's own shape. */
export const ClusterReadyOptions = lazySchema(() =>
  Options.superRefine((options, context) => {
    if (options.url !== undefined && options.cluster !== undefined) {
      context.addIssue({
        code: "custom",
        path: ["cluster"],
        message: "give either url or cluster, not both",
      });
    }
    const onCluster = options.cluster !== undefined || options.connection instanceof Cluster;
    if (onCluster && options.prefix !== undefined && !hasHashTag(options.prefix)) {
      context.addIssue({
        code: "custom",
        path: ["prefix"],
        message:
          'on a Redis Cluster it must contain a hash tag, such as "{hx}": every key of the ' +
          "backend (and BullMQ's) must share one hash slot",
      });
    }
  }),
);
