import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { describeIssues } from "../tools/validate.js";
import { RUN_RECORD_STATUSES, RunRecordStatus } from "./schemas.js";
import type { RunSummary } from "./summary.js";

/** Runs per `list()` page. */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 500;

/** What `runtime.list()` accepts. */
export interface ListOptions {
  status?: RunRecordStatus | undefined;
  agent?: string | undefined;
  sessionId?: string | undefined;
  /** Only runs created at or after this time (ms since the epoch). */
  since?: number | undefined;
  /** Only runs created before this time (ms since the epoch; the range is `[since, until)`). */
  until?: number | undefined;
  /**
   * A search: the runs of the session with exactly this id when there is one, else the runs
   * whose id starts with it (at most `MAX_SEARCH_MATCHES` of them, the first by id). Not with
   * `sessionId`.
   */
  q?: string | undefined;
  /**
   * Runs per page, at most 500.
   * @defaultValue 50
   */
  limit?: number | undefined;
  /** The `nextCursor` of the previous page; none (or null) for the first page. */
  cursor?: string | null | undefined;
  /** Only the child runs of this run (SPEC §14). */
  parentRunId?: string | undefined;
  /** Only the runs of the tree with this root: the root and every run below it (SPEC §14). */
  rootRunId?: string | undefined;
}

/** One page of `runtime.list()`: newest first; `nextCursor` is null on the last page. */
export interface RunPage {
  runs: RunSummary[];
  nextCursor: string | null;
}

/** Where a run stands in every index: by creation time, then by run id (bytewise). */
export interface RunPosition {
  createdAt: number;
  runId: string;
}

/** A parsed `list()` request, as the backends take it. */
export interface RunQuery {
  status?: RunRecordStatus;
  agent?: string;
  sessionId?: string;
  limit: number;
  /** Only runs that come after this one (older, or as old with a smaller id). */
  after?: RunPosition;
  /**
   * Only runs created at or after this time: the newest-first walk ends at the first older run,
   * so it costs nothing more than the page.
   */
  since?: number;
  /** `ListOptions.q`. */
  q?: string;
}

/** The most runs a run id prefix search (`ListOptions.q`) reads. */
export const MAX_SEARCH_MATCHES = 1000;

/**
 * The indexes a query reads and the filter applied to what they yield. Every index is ordered
 * by creation time: one per status, per agent × status, per session (each run is in three),
 * and `runIds`, every run id for a prefix search (ordered by id on Redis).
 * A query with a session reads that session's index and filters it by status and agent, so its
 * cost grows with the session's runs, never with the runs stored; any other query merges the
 * indexes that hold exactly the runs it wants — all runs are the status indexes', an agent's
 * runs its agent × status indexes' — at a cost of the page times the number of statuses.
 * Before schemaVersion 4 a run was also in an index of all runs and one per agent
 * (`legacyIndexes`): they are read no more, and pruning takes a run out of them.
 */
export type RunIndex =
  | { kind: "all" }
  | { kind: "status"; status: RunRecordStatus }
  | { kind: "agent"; agent: string }
  | { kind: "agentStatus"; agent: string; status: RunRecordStatus }
  | { kind: "session"; sessionId: string }
  | { kind: "runIds" };

/**
 * An index's name, the tail of its Redis key. A status holds no ":", so a status before an
 * agent's or a session's name keeps every name unambiguous. Redis scripts build the same names.
 */
export function indexName(index: RunIndex): string {
  switch (index.kind) {
    case "all":
      return "all";
    case "status":
      return `status:${index.status}`;
    case "agent":
      return `agent:${index.agent}`;
    case "agentStatus":
      return `agent-status:${index.status}:${index.agent}`;
    case "session":
      return `session:${index.sessionId}`;
    case "runIds":
      return "run-ids";
  }
}

type Indexed = Pick<RunSummary, "agent" | "sessionId" | "status">;

/** The indexes a run leaves when its status changes. */
export const statusIndexes = (run: Indexed): RunIndex[] => [
  { kind: "status", status: run.status },
  { kind: "agentStatus", agent: run.agent, status: run.status },
];

/**
 * Every index a run is in. `runIds` holds every run id for a prefix search (`ListOptions.q`): on
 * Redis all scored 0, so that it is ordered by id (ZRANGE BYLEX).
 */
export const runIndexes = (run: Indexed): RunIndex[] => [
  { kind: "session", sessionId: run.sessionId },
  ...statusIndexes(run),
  { kind: "runIds" },
];

/** The indexes a run stored before schemaVersion 4 may also be in. */
export const legacyIndexes = (run: Indexed): RunIndex[] => [
  { kind: "all" },
  { kind: "agent", agent: run.agent },
];

export interface IndexedQuery {
  /** Read together, newest first across all of them (no run is in two of them). */
  indexes: RunIndex[];
  /** Set only when reading a session's index. */
  filter: { status?: RunRecordStatus; agent?: string };
}

export function indexFor(query: RunQuery): IndexedQuery {
  const { status, agent, sessionId } = query;
  if (sessionId !== undefined) {
    return {
      indexes: [{ kind: "session", sessionId }],
      filter: {
        ...(status === undefined ? {} : { status }),
        ...(agent === undefined ? {} : { agent }),
      },
    };
  }
  const statuses = status === undefined ? RUN_RECORD_STATUSES : [status];
  return {
    indexes: statuses.map((each) =>
      agent === undefined
        ? { kind: "status", status: each }
        : { kind: "agentStatus", agent, status: each },
    ),
    filter: {},
  };
}

/** Does a summary pass an index's filter? */
export const matchesFilter = (summary: RunSummary, filter: IndexedQuery["filter"]): boolean =>
  (filter.status === undefined || summary.status === filter.status) &&
  (filter.agent === undefined || summary.agent === filter.agent);

const ListOptionsSchema = lazySchema(() =>
  z.strictObject({
    status: RunRecordStatus.optional(),
    agent: z.string().min(1).optional(),
    sessionId: z.string().min(1).optional(),
    since: z.number().int().nonnegative().optional(),
    until: z.number().int().nonnegative().optional(),
    q: z.string().min(1).max(500).optional(),
    limit: z.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
    cursor: z.string().min(1).nullish(),
  }),
);

/** Parses `list()` options; throws `ConfigError` naming the bad path (a bad cursor too). */
export function parseListOptions(options: unknown): RunQuery {
  const parsed = ListOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    throw new ConfigError(`Invalid list options: ${describeIssues(parsed.error.issues)}`);
  }
  const { status, agent, sessionId, since, until, q, limit, cursor } = parsed.data;
  if (q !== undefined && sessionId !== undefined) {
    throw new ConfigError("Invalid list options: q: not with sessionId (q finds a session too).");
  }
  if (since !== undefined && until !== undefined && until < since) {
    throw new ConfigError(
      `Invalid list options: until: ${until} is before since (${since}); the range is [since, until).`,
    );
  }
  const after = startOf(
    cursor === undefined || cursor === null ? undefined : decodeCursor(cursor),
    until,
  );
  return {
    ...(status === undefined ? {} : { status }),
    ...(agent === undefined ? {} : { agent }),
    ...(sessionId === undefined ? {} : { sessionId }),
    limit: limit ?? DEFAULT_LIST_LIMIT,
    ...(after === undefined ? {} : { after }),
    ...(since === undefined ? {} : { since }),
    ...(q === undefined ? {} : { q }),
  };
}

/** Does a summary pass a query's status, agent and time filters (a search reads no index)? */
const matchesQuery = (summary: RunSummary, query: RunQuery): boolean =>
  matchesFilter(summary, query) &&
  (query.since === undefined || summary.createdAt >= query.since) &&
  (query.after === undefined || newestFirst(query.after, summary) < 0);

/**
 * One page of a run id prefix search from the runs it matched (any order): the ones that pass
 * the query's filters and come after its cursor, newest first.
 */
export function searchPage(matches: readonly RunSummary[], query: RunQuery): RunPage {
  const kept = matches.filter((summary) => matchesQuery(summary, query));
  kept.sort(newestFirst);
  return pageOf(kept.slice(0, query.limit + 1), query.limit);
}

/**
 * Where a page starts: after the cursor, and never at a run created at or after `until` (a
 * position at `until` with the smallest id comes before every run created before it). The later
 * of the two in the walk wins.
 */
function startOf(cursor: RunPosition | undefined, until: number | undefined) {
  if (until === undefined) return cursor;
  const bound: RunPosition = { createdAt: until, runId: "" };
  return cursor === undefined || newestFirst(bound, cursor) > 0 ? bound : cursor;
}

const CursorPayload = lazySchema(() => z.tuple([z.literal(1), z.number(), z.string().min(1)]));

/** The opaque cursor of a page ending at `position`. */
export function encodeCursor(position: RunPosition): string {
  return Buffer.from(JSON.stringify([1, position.createdAt, position.runId])).toString("base64url");
}

/** Reads a cursor made by `encodeCursor`; throws `ConfigError` for anything else. */
export function decodeCursor(cursor: string): RunPosition {
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    payload = undefined;
  }
  const parsed = CursorPayload.safeParse(payload);
  if (!parsed.success) {
    throw new ConfigError(
      "Invalid list options: cursor: not a cursor returned by list() (pass its nextCursor as is).",
    );
  }
  return { createdAt: parsed.data[1], runId: parsed.data[2] };
}

/**
 * Orders positions newest first: later creation first, then the larger run id (compared
 * bytewise, as Redis orders the members of a sorted set).
 */
export function newestFirst(first: RunPosition, second: RunPosition): number {
  if (first.createdAt !== second.createdAt) return second.createdAt - first.createdAt;
  return Buffer.compare(Buffer.from(second.runId), Buffer.from(first.runId));
}

/**
 * A page from up to `limit + 1` summaries read in order: the extra one says there is more. With
 * `since`, the page ends at the first run created before it (and has no next page then).
 */
export function pageOf(summaries: readonly RunSummary[], limit: number, since?: number): RunPage {
  const older =
    since === undefined ? -1 : summaries.findIndex((summary) => summary.createdAt < since);
  const inRange = older === -1 ? summaries : summaries.slice(0, older);
  const runs = inRange.slice(0, limit);
  const last = runs.at(-1);
  return {
    runs,
    nextCursor:
      inRange.length > limit && last !== undefined
        ? encodeCursor({ createdAt: last.createdAt, runId: last.runId })
        : null,
  };
}
