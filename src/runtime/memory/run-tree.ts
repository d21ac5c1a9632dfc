import type { CallLedger } from "../../store/call-ledger.js";
import { LeaseLostError } from "../../store/errors.js";
import {
  type ChildOutcome,
  oldestFirst,
  type RunLink,
  type RunTree,
} from "../../store/run-tree.js";
import { type Below, RunsBelow } from "./runs-below.js";

/**
 * The run tree in memory: links by child, and per run with children the runs below it (as the
 * Redis tree's fields of a run hash and `treeDeep` sets). A released child stops counting, and
 * leaves the tree when no run of it is stored, as does a child of a turn a crash cut short;
 * `forget` drops a run as the store prunes or deletes it.
 */
export class MemoryRunTree implements RunTree {
  readonly #links = new Map<string, RunLink>();
  readonly #below = new Map<string, RunsBelow>();
  /** Whether `token` is still the newest lease token of the run (`Leases`). */
  readonly #fences: (runId: string, token: number) => boolean;
  /** The call ledger's commit, for a child's outcome (`childFinished`). */
  readonly #commit: CallLedger["commitRaw"];
  /** Whether a run is stored (`releaseChild`). */
  readonly #stored: (runId: string) => boolean;

  constructor(options: {
    fences: (runId: string, token: number) => boolean;
    commit: CallLedger["commitRaw"];
    stored: (runId: string) => boolean;
  }) {
    this.#fences = options.fences;
    this.#commit = options.commit;
    this.#stored = options.stored;
  }

  /** Whether `runId` has a link (a child run is stored only while it has: `createRun`). */
  linked(runId: string): boolean {
    return this.#links.has(runId);
  }

  async waitForChildren(
    parentRunId: string,
    token: number,
    links: readonly RunLink[],
  ): Promise<void> {
    if (!this.#fences(parentRunId, token)) throw new LeaseLostError(parentRunId, token);
    // What the parent waited for before stops counting: these are now its running children.
    const parent = this.#below.get(parentRunId);
    const before: string[] = [];
    if (parent !== undefined) {
      for (const [runId, state] of parent.entries()) {
        if (state !== "running") continue;
        parent.set(runId, "finished");
        before.push(runId);
      }
      parent.running = 0;
    }
    for (const link of links) this.#place(link, { countAgain: true });
    // Those replaced were a turn a crash cut short: nothing starts them (as on Redis).
    for (const runId of before) {
      if (parent?.get(runId) === "finished" && !this.#stored(runId)) this.forget(runId);
    }
  }

  async linkChild(link: RunLink): Promise<boolean> {
    return this.#place(link, { countAgain: false });
  }

  async linkOf(runId: string): Promise<RunLink | undefined> {
    const link = this.#links.get(runId);
    return link === undefined ? undefined : structuredClone(link);
  }

  async childrenOf(parentRunId: string): Promise<RunLink[]> {
    return this.#linksBelow(parentRunId, (state) => state !== "descendant");
  }

  async descendantsOf(rootRunId: string): Promise<RunLink[]> {
    return this.#linksBelow(rootRunId, () => true);
  }

  async childFinished(link: RunLink, outcome?: ChildOutcome): Promise<boolean> {
    if (outcome !== undefined) {
      const { parentRunId, parentIteration } = link;
      await this.#commit(parentRunId, parentIteration, outcome.result, outcome.events);
    }
    const parent = this.#below.get(link.parentRunId);
    if (parent === undefined) return true;
    if (parent.get(link.runId) === "running") {
      parent.set(link.runId, "finished");
      parent.running -= 1;
    }
    return parent.running === 0;
  }

  async releaseChild(link: Pick<RunLink, "runId" | "parentRunId">): Promise<void> {
    const parent = this.#below.get(link.parentRunId);
    if (parent !== undefined && parent.get(link.runId) === "running") {
      parent.set(link.runId, "released");
      parent.running -= 1;
    }
    // A child its call never started leaves no link behind (as on Redis: DROP_UNSTARTED).
    if (!this.#stored(link.runId)) this.forget(link.runId);
  }

  async runningChildren(parentRunId: string): Promise<string[]> {
    const runs = this.#below.get(parentRunId)?.entries() ?? [];
    return runs.flatMap(([runId, state]) => (state === "running" ? [runId] : []));
  }

  /**
   * Drops `runId`'s link and its places below its parent and its root (the run is pruned or
   * deleted), and its children no run of which is stored (a turn a crash cut short recorded
   * them); the runs below it keep their places until they go too.
   */
  forget(runId: string): void {
    const children = this.#below.get(runId)?.entries() ?? [];
    for (const [id, state] of children) {
      if (state !== "descendant" && !this.#stored(id)) this.forget(id);
    }
    const link = this.#links.get(runId);
    if (link === undefined) return;
    this.#links.delete(runId);
    this.#unlinkFrom(link.parentRunId, runId);
    if (link.rootRunId !== link.parentRunId) this.#unlinkFrom(link.rootRunId, runId);
  }

  /**
   * Stores `link` unless stored (true when this stored it) and counts the child running under
   * its parent unless its parent holds it already (released, it counts again; with
   * `countAgain`, finished too).
   */
  #place(link: RunLink, { countAgain }: { countAgain: boolean }): boolean {
    const linked = !this.#links.has(link.runId);
    // A link is flat (strings and numbers): a spread copy shares its strings, a deep clone
    // would copy each id once more per link kept.
    if (linked) this.#links.set(link.runId, { ...link });
    const parent = this.#belowOf(link.parentRunId);
    const state = parent.get(link.runId);
    if (state === undefined || state === "released" || (countAgain && state === "finished")) {
      parent.set(link.runId, "running");
      parent.running += 1;
    }
    if (link.rootRunId !== link.parentRunId) {
      const root = this.#belowOf(link.rootRunId);
      if (!root.has(link.runId)) root.set(link.runId, "descendant");
    }
    return linked;
  }

  #unlinkFrom(holderRunId: string, runId: string): void {
    const holder = this.#below.get(holderRunId);
    const state = holder?.get(runId);
    if (holder === undefined || state === undefined) return;
    holder.delete(runId);
    if (state === "running") holder.running -= 1;
    if (holder.size === 0) this.#below.delete(holderRunId);
  }

  #belowOf(runId: string): RunsBelow {
    let below = this.#below.get(runId);
    if (below === undefined) {
      below = new RunsBelow();
      this.#below.set(runId, below);
    }
    return below;
  }

  #linksBelow(runId: string, take: (state: Below) => boolean): RunLink[] {
    const runs = this.#below.get(runId)?.entries() ?? [];
    return runs
      .flatMap(([id, state]) => {
        const link = take(state) ? this.#links.get(id) : undefined;
        return link === undefined ? [] : [structuredClone(link)];
      })
      .sort(oldestFirst);
  }
}
