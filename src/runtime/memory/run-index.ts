import type { Overview, OverviewQuery } from "../../store/overview.js";
import { decodeStored } from "../../store/record/codec.js";
import {
  type IndexedQuery,
  indexFor,
  indexName,
  MAX_SEARCH_MATCHES,
  matchesFilter,
  newestFirst,
  pageOf,
  type RunIndex,
  type RunPage,
  type RunPosition,
  type RunQuery,
  runIndexes,
  searchPage,
  statusIndexes,
} from "../../store/run-query.js";
import { isTerminal } from "../../store/schemas.js";
import { RunSummary } from "../../store/summary.js";
import { flat } from "./flat.js";
import { MemoryOverviewCounters } from "./overview-counters.js";

/**
 * The memory backend's summaries and time indexes: the same indexes as Redis's sorted sets
 * (see `RunIndex`), each an array kept newest first, so a page is a binary search and a walk
 * (a merged walk when a query reads several).
 */
export class MemoryRunIndex {
  /** Summaries as JSON, so that no caller shares objects with the store. */
  readonly #summaries = new Map<string, string>();
  readonly #indexes = new Map<string, RunPosition[]>();
  /** Finished runs by id: when they finished. */
  readonly #finished = new Map<string, number>();
  /** The overview's counters, kept with the indexes as runs are written. */
  readonly #counters = new MemoryOverviewCounters();

  /** Writes a run's summary and moves it between the indexes its status change implies. */
  put(summary: RunSummary): void {
    const stored = this.#summaries.get(summary.runId);
    const previous =
      stored === undefined ? undefined : decodeStored(RunSummary, stored, "A stored run summary");
    this.#summaries.set(summary.runId, flat(JSON.stringify(summary)));
    this.#counters.count(previous, summary);
    const position = { createdAt: summary.createdAt, runId: summary.runId };
    if (previous === undefined) {
      for (const index of runIndexes(summary)) this.#insert(index, position);
    } else if (previous.status !== summary.status) {
      for (const index of statusIndexes(previous)) this.#remove(index, position);
      for (const index of statusIndexes(summary)) this.#insert(index, position);
    }
    if (isTerminal(summary.status)) this.#finished.set(summary.runId, summary.updatedAt);
    else this.#finished.delete(summary.runId);
  }

  /** Forgets a run: its summary and its place in every index (all searched if it is unreadable). */
  remove(runId: string): void {
    const stored = this.#summaries.get(runId);
    if (stored === undefined) return;
    let summary: RunSummary | undefined;
    try {
      summary = decodeStored(RunSummary, stored, "A stored run summary");
    } catch {
      summary = undefined;
    }
    if (summary === undefined) {
      for (const [key, positions] of this.#indexes) {
        const kept = positions.filter((position) => position.runId !== runId);
        if (kept.length === 0) this.#indexes.delete(key);
        else this.#indexes.set(key, kept);
      }
    } else {
      const position = { createdAt: summary.createdAt, runId };
      for (const index of runIndexes(summary)) this.#remove(index, position);
    }
    this.#summaries.delete(runId);
    this.#finished.delete(runId);
    this.#counters.forget(runId);
  }

  /** The overview over a window, from its counters. */
  overview(query: OverviewQuery): Overview {
    return this.#counters.read(query);
  }

  /** Whether a summary is kept for the run. */
  has(runId: string): boolean {
    return this.#summaries.has(runId);
  }

  /** The run's summary; throws `record_corrupt` when it cannot be read. */
  summaryOf(runId: string): RunSummary | undefined {
    const stored = this.#summaries.get(runId);
    return stored === undefined
      ? undefined
      : decodeStored(RunSummary, stored, "A stored run summary");
  }

  /** The ids of the runs that finished before `time`. */
  finishedBefore(time: number): string[] {
    return [...this.#finished].flatMap(([runId, at]) => (at < time ? [runId] : []));
  }

  page(query: RunQuery): RunPage {
    const { q, ...rest } = query;
    if (q === undefined) return this.#indexedPage(query);
    if (this.#indexes.has(indexName({ kind: "session", sessionId: q }))) {
      return this.#indexedPage({ ...rest, sessionId: q });
    }
    // As Redis reads them: the first matches by id (bytewise).
    const ids = (this.#indexes.get(indexName({ kind: "runIds" })) ?? [])
      .map((position) => position.runId)
      .filter((runId) => runId.startsWith(q))
      .sort((first, second) => Buffer.compare(Buffer.from(first), Buffer.from(second)))
      .slice(0, MAX_SEARCH_MATCHES);
    const matches = ids.flatMap((runId) => {
      const stored = this.#summaries.get(runId);
      return stored === undefined ? [] : [decodeStored(RunSummary, stored, "A stored run summary")];
    });
    return searchPage(matches, rest);
  }

  #indexedPage(query: RunQuery): RunPage {
    const { indexes, filter }: IndexedQuery = indexFor(query);
    const { after } = query;
    // One lane per index, from the cursor on; each step takes the newest head of them all.
    const lanes = indexes.map((index) => {
      const positions = this.#indexes.get(indexName(index)) ?? [];
      return { positions, at: after === undefined ? 0 : firstAfter(positions, after) };
    });
    const headOf = (lane: (typeof lanes)[number]) => lane.positions[lane.at];
    const summaries: RunSummary[] = [];
    while (summaries.length <= query.limit) {
      let newest: (typeof lanes)[number] | undefined;
      for (const lane of lanes) {
        const head = headOf(lane);
        if (head === undefined) continue;
        const best = newest === undefined ? undefined : headOf(newest);
        if (best === undefined || newestFirst(head, best) < 0) newest = lane;
      }
      const position = newest === undefined ? undefined : headOf(newest);
      if (newest === undefined || position === undefined) break;
      // Newest first: every run after one created before `since` is older still.
      if (query.since !== undefined && position.createdAt < query.since) break;
      newest.at += 1;
      const stored = this.#summaries.get(position.runId);
      if (stored === undefined) continue;
      const summary = decodeStored(RunSummary, stored, "A stored run summary");
      if (matchesFilter(summary, filter)) summaries.push(summary);
    }
    return pageOf(summaries, query.limit, query.since);
  }

  #insert(index: RunIndex, position: RunPosition): void {
    const key = indexName(index);
    const positions = this.#indexes.get(key) ?? [];
    this.#indexes.set(key, positions);
    positions.splice(firstAfter(positions, position), 0, position);
  }

  #remove(index: RunIndex, position: RunPosition): void {
    const key = indexName(index);
    const positions = this.#indexes.get(key);
    if (positions === undefined) return;
    const at = firstAfter(positions, position) - 1;
    if (at >= 0 && positions[at]?.runId === position.runId) positions.splice(at, 1);
    if (positions.length === 0) this.#indexes.delete(key);
  }
}

/** The first index of `positions` (newest first) holding a position after `position`. */
function firstAfter(positions: readonly RunPosition[], position: RunPosition): number {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (newestFirst(positions[middle] as RunPosition, position) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
