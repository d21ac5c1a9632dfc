import { ConfigError } from "../core/errors.js";
import type { RunBackend } from "../store/backend.js";
import {
  DEFAULT_LIST_LIMIT,
  type ListOptions,
  matchesFilter,
  parseListOptions,
  type RunPage,
  type RunQuery,
} from "../store/run-query.js";
import type { RunLink } from "../store/run-tree.js";
import { isTerminal } from "../store/schemas.js";
import { type RunDetail, type RunSummary, summarize } from "../store/summary.js";

/** A summary or detail with its run's place in its tree, when it is a child. */
export function withLink<T extends RunSummary>(run: T, link: RunLink | undefined): T {
  if (link === undefined) return run;
  return {
    ...run,
    parentRunId: link.parentRunId,
    parentToolCallId: link.parentToolCallId,
    rootRunId: link.rootRunId,
  };
}

/**
 * A run's detail with its parent's link and its children: those stored (SPEC §14, "the
 * parent's detail lists `children`"), as a list by parent gives them. A child is linked before
 * it is stored (and a turn a crash cut short may leave links whose child never starts).
 */
export async function treeDetail(backend: RunBackend, detail: RunDetail): Promise<RunDetail> {
  const [link, children] = await Promise.all([
    backend.linkOf(detail.runId),
    backend.childrenOf(detail.runId).then((links) => storedOnly(backend, links)),
  ]);
  const linked = withLink(detail, link);
  if (children.length === 0) return linked;
  return {
    ...linked,
    children: children.map(({ runId, agent, parentToolCallId }) => ({
      runId,
      agent,
      parentToolCallId,
    })),
  };
}

/** Of `links`, those whose child run is stored. */
async function storedOnly(backend: RunBackend, links: RunLink[]): Promise<RunLink[]> {
  const statuses = await Promise.all(links.map((each) => backend.runStatus(each.runId)));
  return links.filter((_each, at) => statuses[at] !== undefined);
}

/** True when `list()` options ask for a tree (`parentRunId` or `rootRunId`). */
export const asksForTree = (options: ListOptions): boolean =>
  options.parentRunId !== undefined || options.rootRunId !== undefined;

/**
 * One page of a tree's runs, newest first: the children of `parentRunId`, or the root
 * `rootRunId` and every run below it, filtered as the flat list filters (`status`, `agent`,
 * `sessionId`, `since`/`until`, and `q`: the runs of the session with exactly that id when one
 * of the tree's runs is in it, else the runs whose id starts with it). The options are checked
 * as the flat list checks them. The cursor is the position in the tree's runs; a tree is read
 * whole for each page, so its cost grows with the tree, never with the runs stored.
 */
export async function listTree(backend: RunBackend, options: ListOptions): Promise<RunPage> {
  const { parentRunId, rootRunId, cursor, ...filters } = options;
  const { limit = DEFAULT_LIST_LIMIT, until } = filters;
  if (parentRunId !== undefined && rootRunId !== undefined) {
    throw new ConfigError("Invalid list options: parentRunId: not with rootRunId.");
  }
  for (const [name, value] of Object.entries({ parentRunId, rootRunId })) {
    if (value !== undefined && (typeof value !== "string" || value.length === 0)) {
      throw new ConfigError(`Invalid list options: ${name}: a run id, got ${String(value)}.`);
    }
  }
  const offset = cursor === undefined || cursor === null ? 0 : Number(cursor);
  if (!Number.isInteger(offset) || offset < 0) {
    throw new ConfigError(`Invalid list options: cursor: not a cursor of this tree (${cursor}).`);
  }
  // The flat list's checks and parsing (its cursor is of another kind, checked above).
  const query = parseListOptions(filters);
  const links =
    parentRunId !== undefined
      ? await backend.childrenOf(parentRunId)
      : await backend.descendantsOf(rootRunId as string);
  const ids = [
    ...(parentRunId === undefined ? [rootRunId as string] : []),
    ...links.map((each) => each.runId),
  ];
  const linkById = new Map(links.map((each) => [each.runId, each]));
  const records = await Promise.all(ids.map((id) => backend.loadRun(id)));
  const tree = records.flatMap((record) =>
    record === undefined ? [] : [withLink(summarize(record), linkById.get(record.runId))],
  );
  const summaries = tree
    .filter((summary) => inTreeQuery(summary, query, until, searchOf(tree, query.q)))
    .sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : -1));
  const page = summaries.slice(offset, offset + limit);
  const next = offset + limit;
  return { runs: page, nextCursor: next < summaries.length ? String(next) : null };
}

/** What `q` finds in a tree: a session one of its runs is in, else a run id prefix. */
type TreeSearch = { sessionId: string } | { runIdPrefix: string } | undefined;

function searchOf(tree: readonly RunSummary[], q: string | undefined): TreeSearch {
  if (q === undefined) return undefined;
  return tree.some((summary) => summary.sessionId === q) ? { sessionId: q } : { runIdPrefix: q };
}

function inTreeQuery(
  summary: RunSummary,
  query: RunQuery,
  until: number | undefined,
  search: TreeSearch,
): boolean {
  return (
    matchesFilter(summary, query) &&
    (query.sessionId === undefined || summary.sessionId === query.sessionId) &&
    (query.since === undefined || summary.createdAt >= query.since) &&
    (until === undefined || summary.createdAt < until) &&
    (search === undefined ||
      ("sessionId" in search
        ? summary.sessionId === search.sessionId
        : summary.runId.startsWith(search.runIdPrefix)))
  );
}

/**
 * Cancels every unfinished run below `runId` (its children, theirs, …): each is asked to cancel
 * as `runtime.cancel` asks (heard by its worker in any process) and stepped to end cancelled.
 */
export async function cancelDescendants(backend: RunBackend, runId: string): Promise<void> {
  const children = await backend.childrenOf(runId);
  await Promise.all(
    children.map(async (child) => {
      const status = await backend.runStatus(child.runId);
      if (status !== undefined && !isTerminal(status)) {
        await backend.requestCancel(child.runId);
        await backend.enqueueStep(child.runId, { agent: child.agent });
      }
      await cancelDescendants(backend, child.runId);
    }),
  );
}
