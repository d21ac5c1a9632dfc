import { LeaseLostError } from "../../store/errors.js";
import type { RunLink, RunTree } from "../../store/run-tree.js";

/**
 * The children a parent waits for: running (true) or finished (false), and how many run; a
 * released child is not in it. Dropped once none runs, as the Redis hash is.
 */
interface Waits {
  children: Map<string, boolean>;
  running: number;
}

/** The run tree in memory: links by child, children by parent and by root, running children. */
export class MemoryRunTree implements RunTree {
  readonly #links = new Map<string, RunLink>();
  readonly #children = new Map<string, RunLink[]>();
  readonly #byRoot = new Map<string, RunLink[]>();
  readonly #waits = new Map<string, Waits>();
  /** Whether `token` is still the newest lease token of the run (`Leases`). */
  readonly #fences: (runId: string, token: number) => boolean;

  constructor(options: { fences: (runId: string, token: number) => boolean }) {
    this.#fences = options.fences;
  }

  async waitForChildren(
    parentRunId: string,
    token: number,
    links: readonly RunLink[],
  ): Promise<void> {
    if (!this.#fences(parentRunId, token)) throw new LeaseLostError(parentRunId, token);
    const waits: Waits = { children: new Map(), running: 0 };
    for (const link of links) {
      this.#record(link);
      if (!waits.children.has(link.runId)) waits.running += 1;
      waits.children.set(link.runId, true);
    }
    if (waits.running === 0) this.#waits.delete(parentRunId);
    else this.#waits.set(parentRunId, waits);
  }

  async linkChild(link: RunLink): Promise<boolean> {
    const linked = this.#record(link);
    const waits = this.#waits.get(link.parentRunId) ?? { children: new Map(), running: 0 };
    if (!waits.children.has(link.runId)) {
      waits.children.set(link.runId, true);
      waits.running += 1;
    }
    this.#waits.set(link.parentRunId, waits);
    return linked;
  }

  async linkOf(runId: string): Promise<RunLink | undefined> {
    const link = this.#links.get(runId);
    return link === undefined ? undefined : structuredClone(link);
  }

  async childrenOf(parentRunId: string): Promise<RunLink[]> {
    return structuredClone(this.#children.get(parentRunId) ?? []);
  }

  async descendantsOf(rootRunId: string): Promise<RunLink[]> {
    return structuredClone(this.#byRoot.get(rootRunId) ?? []);
  }

  async childFinished(link: RunLink): Promise<boolean> {
    const waits = this.#waits.get(link.parentRunId);
    if (waits?.children.get(link.runId) === true) {
      waits.children.set(link.runId, false);
      waits.running -= 1;
    }
    return this.#settle(link.parentRunId);
  }

  async releaseChild(link: Pick<RunLink, "runId" | "parentRunId">): Promise<void> {
    const waits = this.#waits.get(link.parentRunId);
    if (waits?.children.get(link.runId) === true) {
      waits.children.delete(link.runId);
      waits.running -= 1;
    }
    this.#settle(link.parentRunId);
  }

  async runningChildren(parentRunId: string): Promise<string[]> {
    const children = this.#waits.get(parentRunId)?.children ?? new Map<string, boolean>();
    return [...children].filter(([, running]) => running).map(([runId]) => runId);
  }

  /** Stores a link not stored yet (true), under its parent and its root. */
  #record(link: RunLink): boolean {
    if (this.#links.has(link.runId)) return false;
    const stored = structuredClone(link);
    this.#links.set(link.runId, stored);
    append(this.#children, link.parentRunId, stored);
    append(this.#byRoot, link.rootRunId, stored);
    return true;
  }

  /** True when no child of the parent runs; then its waits are dropped. */
  #settle(parentRunId: string): boolean {
    const waits = this.#waits.get(parentRunId);
    if (waits !== undefined && waits.running > 0) return false;
    this.#waits.delete(parentRunId);
    return true;
  }
}

function append(map: Map<string, RunLink[]>, key: string, link: RunLink): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [link]);
  else list.push(link);
}
