import { z } from "zod";
import { loggableError } from "../../core/errors.js";
import { lazySchema } from "../../core/lazy-schema.js";
import { type ExtensionStateStore, sessionOfStateKey } from "../../extensions/state-store.js";
import { conversationOf } from "../../store/conversation.js";
import { BackendError, LeaseLostError } from "../../store/errors.js";
import type { Overview, OverviewQuery } from "../../store/overview.js";
import { encodeCheckpoint } from "../../store/record/checkpoint-codec.js";
import { joinRecord } from "../../store/record/decode.js";
import { recordDocument } from "../../store/record/encode.js";
import {
  decodeSummary,
  encodeSummary,
  readAnnouncement,
} from "../../store/record/summary-codec.js";
import {
  indexFor,
  legacyIndexes,
  MAX_SEARCH_MATCHES,
  pageOf,
  type RunPage,
  type RunQuery,
  runIndexes,
  searchPage,
} from "../../store/run-query.js";
import type {
  DeleteOutcome,
  PruneOutcome,
  RunStore,
  SaveOptions,
  SaveOutcome,
} from "../../store/run-store.js";
import { contextView } from "../../store/run-view.js";
import {
  isRunRecordStatus,
  isTerminal,
  RUN_RECORD_STATUSES,
  type RunRecord,
  type RunRecordStatus,
  type ToolJob,
} from "../../store/schemas.js";
import { corruptSummary, type RunSummary, summarize } from "../../store/summary.js";
import { mastersOf, type RedisClient, subscriberOf } from "../redis-connection.js";
import { DELETE_RUN, PRUNE_RUN } from "../redis-delete-scripts.js";
import { indexFields } from "../redis-index-lua.js";
import { LIST_RUNS } from "../redis-index-scripts.js";
import { type RedisKeys, retainedKeys } from "../redis-keys.js";
import { redisExtensionStateStore } from "../redis-run-extras.js";
import { SAVE_RUN } from "../redis-scripts.js";
import { CREATE_RUNS, createRunsArgs } from "../redis-submit.js";
import { SummaryFeed } from "../summary-feed.js";
import type { RedisContext } from "./context.js";
import { readOverview } from "./overview-read.js";
import { parseSaveReply, rawResultsOf, storedSummary } from "./replies.js";
import { saveFields } from "./save-fields.js";
import { deletedPlaceOf } from "./tree-place.js";

const Replies = lazySchema(() => z.array(z.string()));
/** Runs pruned per round trip. */
const PRUNE_BATCH = 100;

/**
 * The run store in Redis: a hash per run (record document, status, summary), its messages as an
 * append-only list, the time indexes as sorted sets, and a summary channel for `watchRuns`.
 */
export class RedisRunStore implements RunStore {
  readonly extensionState: ExtensionStateStore;
  readonly #context: RedisContext;
  /** Where a save's tool jobs are queued (`SaveOptions.thenTools`). */
  readonly #enqueueTool: (job: ToolJob) => Promise<void>;
  readonly #changes = new SummaryFeed();
  /** Hears run summaries from every process (`watchRuns`), once something watches. */
  #summarySubscriber: RedisClient | undefined;
  #summarySubscription: Promise<void> | undefined;

  constructor(context: RedisContext, enqueueTool: (job: ToolJob) => Promise<void>) {
    this.#context = context;
    this.#enqueueTool = enqueueTool;
    this.extensionState = redisExtensionStateStore(context.redis, context.keys);
  }

  async createRun(record: RunRecord): Promise<boolean> {
    const { redis, keys, maxEvents } = this.#context;
    const [created] = z
      .array(z.number())
      .parse(await CREATE_RUNS.run(redis, ...createRunsArgs(keys, [record], maxEvents)));
    return created === 1;
  }

  async loadRun(runId: string): Promise<RunRecord | undefined> {
    const { redis, keys, marker, where } = this.#context;
    // Issued together: the connection sends them in one write.
    const [[document, summary], messages] = await Promise.all([
      redis.hmget(keys.run(runId), "record", "summary"),
      redis.lrange(keys.messages(runId), 0, -1),
    ]);
    if (document != null) return joinRecord(document, messages, storedSummary(runId, summary));
    await marker.assertKept(where);
    return undefined;
  }

  async runStatus(runId: string): Promise<RunRecordStatus | undefined> {
    const { redis, keys } = this.#context;
    const status = await redis.hget(keys.run(runId), "status");
    return status !== null && isRunRecordStatus(status) ? status : undefined;
  }

  async listRuns(query: RunQuery): Promise<RunPage> {
    const { q, ...rest } = query;
    if (q === undefined) return this.#indexedPage(query);
    const { redis, keys } = this.#context;
    const session = keys.index({ kind: "session", sessionId: q });
    if ((await redis.exists(session)) === 1) return this.#indexedPage({ ...rest, sessionId: q });
    // Every id starting with `q`: from "[q" to "[q" and a byte no UTF-8 string holds.
    const ids = await redis.zrangebylex(
      keys.index({ kind: "runIds" }),
      `[${q}`,
      Buffer.concat([Buffer.from(`[${q}`), Buffer.from([0xff])]),
      "LIMIT",
      0,
      MAX_SEARCH_MATCHES,
    );
    const stored = await Promise.all(ids.map((runId) => redis.hget(keys.run(runId), "summary")));
    const matches = ids.flatMap((runId, at) => {
      const json = stored[at];
      if (json == null) return [];
      try {
        return [decodeSummary(runId, json)];
      } catch (error) {
        this.#context.logger.warn({ err: loggableError(error), runId }, "a stored run is corrupt");
        return [];
      }
    });
    return searchPage(matches, rest);
  }

  async #indexedPage(query: RunQuery): Promise<RunPage> {
    const { redis, keys, marker, where } = this.#context;
    const { indexes, filter } = indexFor(query);
    const indexKeys = indexes.map(keys.index);
    const { after } = query;
    const reply = await LIST_RUNS.run(redis, indexKeys, [
      query.limit,
      after === undefined ? "" : String(after.createdAt),
      after?.runId ?? "",
      keys.runPrefix,
      filter.status ?? "",
      filter.agent ?? "",
    ]);
    const flat = Replies.parse(reply);
    const summaries: RunSummary[] = [];
    for (let at = 0; at + 2 < flat.length; at += 3) {
      const [runId, json, status] = flat.slice(at, at + 3) as [string, string, string];
      try {
        summaries.push(decodeSummary(runId, json));
      } catch (error) {
        // One bad record never hides the others: it is listed, marked, and logged.
        const scores = await Promise.all(indexKeys.map((key) => redis.zscore(key, runId)));
        const createdAt = Number(scores.find((score) => score !== null));
        this.#context.logger.warn({ err: loggableError(error), runId }, "a stored run is corrupt");
        summaries.push(corruptSummary(runId, status, createdAt, error));
      }
    }
    if (summaries.length === 0) await marker.assertKept(where);
    return pageOf(summaries, query.limit, query.since);
  }

  overview(query: OverviewQuery): Promise<Overview> {
    return readOverview(this.#context, query);
  }

  async pruneRuns(finishedBefore: number): Promise<PruneOutcome> {
    const { redis, keys } = this.#context;
    const outcome = { deleted: 0, unreadable: 0 };
    for (;;) {
      // Runs skipped as unreadable stay first in the finished set: the next batch starts after them.
      const runIds = await redis.zrangebyscore(
        keys.finished,
        "-inf",
        `(${finishedBefore}`,
        "LIMIT",
        outcome.unreadable,
        PRUNE_BATCH,
      );
      if (runIds.length === 0) return outcome;
      const summaries = await Promise.all(
        runIds.map((runId) => redis.hget(keys.run(runId), "summary")),
      );
      const outcomes = await Promise.all(
        runIds.map((runId, at) => this.#pruneReadable(runId, summaries[at] ?? null)),
      );
      for (const each of outcomes) {
        if (each === "deleted") outcome.deleted += 1;
        else if (each === "unreadable") outcome.unreadable += 1;
      }
    }
  }

  /** Prunes one finished run unless its summary cannot be read (then it is logged and kept). */
  async #pruneReadable(
    runId: string,
    json: string | null,
  ): Promise<"deleted" | "kept" | "unreadable"> {
    let summary: RunSummary | undefined;
    try {
      summary = json === null ? undefined : decodeSummary(runId, json);
    } catch (error) {
      this.#context.logger.warn(
        { err: loggableError(error), runId },
        "prune skipped a run it cannot read: delete it with runtime.delete(runId)",
      );
      return "unreadable";
    }
    return (await this.#pruneRun(runId, summary)) ? "deleted" : "kept";
  }

  /** Deletes one finished run, given its stored summary (undefined when it has none). */
  async #pruneRun(runId: string, summary: RunSummary | undefined): Promise<boolean> {
    const { redis, keys } = this.#context;
    const indexes =
      summary === undefined
        ? []
        : [...runIndexes(summary), ...legacyIndexes(summary)].map(keys.index);
    const tree = await deletedPlaceOf(redis, keys, runId);
    const reply = await PRUNE_RUN.run(
      redis,
      [
        keys.run(runId),
        keys.finished,
        ...indexes,
        ...tree.keys,
        tree.link,
        ...runKeys(keys, runId, summary?.iterations ?? 0),
      ],
      [runId, indexes.length, ...tree.argv],
    );
    return reply === 1;
  }

  async deleteRun(runId: string): Promise<DeleteOutcome> {
    const { redis, keys } = this.#context;
    const [status = null, summaryJson = null, agent = null, document = null] = await redis.hmget(
      keys.run(runId),
      "status",
      "summary",
      "agent",
      "record",
    );
    if (status === null && summaryJson === null && document === null) return "unknown";
    let summary: RunSummary | undefined;
    let readable = true;
    try {
      summary = summaryJson === null ? undefined : decodeSummary(runId, summaryJson);
      const record = await this.loadRun(runId);
      if (record !== undefined && !isTerminal(record.status)) return "unfinished";
    } catch {
      readable = false;
    }
    if (readable && summary !== undefined) {
      // A finished run that reads well goes as prune deletes it (refused if it started again).
      return (await this.#pruneRun(runId, summary)) ? "deleted" : "unfinished";
    }
    // Unreadable: every index it may be in, by the fields that can still be read.
    // A summary that reads well names it (its JSON says `s`, not `sessionId`).
    const sessionId = summary?.sessionId ?? sessionIdIn(summaryJson) ?? sessionIdIn(document);
    const indexes = [
      ...RUN_RECORD_STATUSES.flatMap((each) => [
        keys.index({ kind: "status", status: each }),
        ...(agent === null ? [] : [keys.index({ kind: "agentStatus", agent, status: each })]),
      ]),
      keys.index({ kind: "all" }),
      keys.index({ kind: "runIds" }),
      // The overview's set of waiting runs, which earlier versions kept (the status index serves now).
      `${keys.indexPrefix}awaiting`,
      ...(agent === null ? [] : [keys.index({ kind: "agent", agent })]),
      ...(sessionId === undefined ? [] : [keys.index({ kind: "session", sessionId })]),
    ];
    const [perIteration, tree] = await Promise.all([
      this.#iterationKeys(runId),
      deletedPlaceOf(redis, keys, runId),
    ]);
    await DELETE_RUN.run(
      redis,
      [
        keys.run(runId),
        keys.finished,
        ...indexes,
        ...tree.keys,
        tree.link,
        ...runKeys(keys, runId, 0),
        ...perIteration,
      ],
      [runId, indexes.length, ...tree.argv],
    );
    return "deleted";
  }

  /**
   * The per-iteration keys (raw results, decisions, in-flight marks) of a run whose iteration
   * count cannot be read: found by scanning the prefix on every master (rare: unreadable runs).
   */
  async #iterationKeys(runId: string): Promise<string[]> {
    const { redis, keys, prefix } = this.#context;
    const pattern = `${escapeGlob(prefix)}:[rdi]*:${escapeGlob(runId)}:*`;
    const found: string[] = [];
    for (const server of mastersOf(redis)) {
      let cursor = "0";
      do {
        const [next, batch] = await server.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        for (const key of batch) {
          const iteration = Number(key.slice(key.lastIndexOf(":") + 1));
          if (!Number.isInteger(iteration) || iteration < 0) continue;
          const owned = [
            keys.raw(runId, iteration),
            keys.decisions(runId, iteration),
            keys.quorum(runId, iteration),
            keys.inFlight(runId, iteration),
          ];
          if (owned.includes(key)) found.push(key);
        }
      } while (cursor !== "0");
    }
    return found;
  }

  async deleteSessionState(sessionId: string): Promise<number> {
    const { redis, keys } = this.#context;
    const pattern = `${escapeGlob(keys.extensionState(""))}*${escapeGlob(`,${JSON.stringify(sessionId)}]`)}`;
    const stateKeyAt = keys.extensionState("").length;
    let deleted = 0;
    // Saved state is not indexed by session: erasing a session scans the state keys of every
    // server that holds data (a rare, operator-driven call).
    for (const server of mastersOf(redis)) {
      let cursor = "0";
      do {
        const [next, found] = await server.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        const owned = found.filter((key) => sessionOfStateKey(key.slice(stateKeyAt)) === sessionId);
        for (const key of owned) deleted += await redis.del(key);
      } while (cursor !== "0");
    }
    return deleted;
  }

  async saveRun(
    runId: string,
    token: number,
    record: RunRecord,
    options: SaveOptions = {},
  ): Promise<SaveOutcome> {
    const { keys, stepRedis } = this.#context;
    const { events = [], storedMessages, thenTools = [] } = options;
    const finished = isTerminal(record.status);
    const summary = summarize(record);
    const summaryJson = encodeSummary(summary);
    const conversation = conversationOf(record);
    const firstNew = storedMessages ?? 0;
    const atDispatch = record.phase === "dispatch";
    const saveKeys = [
      keys.run(runId),
      keys.cancel(runId),
      keys.lease(runId),
      keys.events(runId),
      keys.messages(runId),
      keys.wake(runId),
      keys.checkpoints(runId),
    ];
    if (finished) {
      // Finished: the tree link (read), then the working keys to expire but the cancel and
      // wake-up keys (expired as the save's own keys).
      saveKeys.push(keys.treeLink(runId));
      const retained = retainedKeys(keys, runId, record.result?.iterations ?? 0);
      for (let at = 2; at < retained.length; at += 1) saveKeys.push(retained[at] as string);
    }
    const args: (string | number)[] = [
      saveFields({
        token,
        status: record.status,
        ttlMs: this.#context.lockDurationMs,
        retentionMs: finished ? this.#context.retentionMs : "",
        maxEvents: this.#context.maxEvents,
        storedMessages: storedMessages ?? "",
        release: options.release === true ? "1" : "",
        count: Math.max(0, conversation.length - firstNew),
        index: indexFields(summary),
      }),
      recordDocument(record, summary),
      summaryJson,
      keys.indexPrefix,
      atDispatch ? keys.raw(runId, contextView(record)?.iteration ?? 0) : "",
      keys.runsChannel,
      options.checkpoint === undefined ? "" : encodeCheckpoint(options.checkpoint),
      JSON.stringify(runId),
      // `indexFields`' strings: any string, never inside JSON (see there).
      summary.runId,
      summary.agent,
      summary.sessionId,
      summary.error?.code ?? "",
    ];
    // The new messages, then the events, each as its JSON, pushed onto the one argument list:
    // no slice, map and spread copies of them on every save.
    pushJson(args, conversation, firstNew);
    pushJson(args, events, 0);
    // Every save goes where the adds of the jobs a run's saves queue go (`beforeSteps`): on
    // one Redis, on their connection, so that they follow every save of the run issued before.
    const saving = this.#context.beforeSteps(runId, SAVE_RUN.run(stepRedis, saveKeys, args));
    // Most saves queue no tool job: no Promise.all (an array and a promise) for them.
    const saved =
      thenTools.length === 0
        ? await saving
        : (await Promise.all([saving, ...thenTools.map((job) => this.#enqueueTool(job))]))[0];
    const reply = parseSaveReply(saved);
    if (reply === -1) throw new LeaseLostError(runId, token);
    if (reply === -2) {
      throw new BackendError(
        `Run "${runId}" does not have ${storedMessages ?? 0} stored messages: refusing a save that would misplace the conversation.`,
      );
    }
    this.#context.summaries.set(record, summary);
    const [, cancelled, woken, flatRaw, link] = reply;
    if (finished && link !== undefined) this.#context.finishedLinks.set(record, link);
    return {
      cancelRequested: cancelled === 1,
      ...(options.release === true ? { released: { wake: woken === 1 } } : {}),
      ...(atDispatch ? { raw: rawResultsOf(runId, flatRaw) } : {}),
    };
  }

  async watchRuns(signal: AbortSignal): Promise<AsyncIterable<RunSummary>> {
    const changes = this.#changes.listen(signal);
    this.#summarySubscription ??= this.#subscribeToSummaries().catch((error: unknown) => {
      this.#summarySubscription = undefined;
      throw error;
    });
    await this.#summarySubscription;
    return changes;
  }

  /** Stops hearing summaries. */
  close(): void {
    this.#summarySubscriber?.disconnect();
  }

  /** One subscriber per backend feeds every `watchRuns` listener of this process. */
  async #subscribeToSummaries(): Promise<void> {
    const { redis, keys } = this.#context;
    const subscriber = subscriberOf(redis);
    subscriber.on("error", (error) =>
      this.#context.logger.warn({ err: loggableError(error) }, "runs subscriber error"),
    );
    subscriber.on("message", (_channel: string, json: string) => {
      const summary = readAnnouncement(json);
      if (summary !== undefined) this.#changes.emit(summary);
      else this.#context.logger.warn({ channel: keys.runsChannel }, "skipped a malformed summary");
    });
    this.#summarySubscriber = subscriber;
    await subscriber.connect();
    await subscriber.subscribe(keys.runsChannel);
  }
}

/** Pushes the JSON of each of `values` from index `from` onto `args`. */
function pushJson(args: (string | number)[], values: readonly unknown[], from: number): void {
  for (let at = from; at < values.length; at += 1) args.push(JSON.stringify(values[at]));
}

/** A run's keys besides its hash and index entries, all deleted with it. */
function runKeys(keys: RedisKeys, runId: string, iterations: number): string[] {
  return [
    keys.audit(runId),
    keys.messages(runId),
    keys.checkpoints(runId),
    keys.events(runId),
    keys.recording(runId),
    keys.lease(runId),
    ...retainedKeys(keys, runId, iterations),
  ];
}

/** The `sessionId` a stored JSON object names, if it can still be read from it. */
function sessionIdIn(json: string | null): string | undefined {
  if (json === null) return undefined;
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== "object" || value === null) return undefined;
    const sessionId: unknown = (value as { sessionId?: unknown }).sessionId;
    return typeof sessionId === "string" ? sessionId : undefined;
  } catch {
    return undefined;
  }
}

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, "\\$&");
