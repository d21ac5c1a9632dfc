import type { RunLink, RunTree } from "../../store/run-tree.js";

/** The run tree in memory: links by child, children by parent and by root, running children. */
export class MemoryRunTree implements RunTree {
  readonly #links = new Map<string, RunLink>();
  readonly #children = new Map<string, RunLink[]>();
  readonly #byRoot = new Map<string, RunLink[]>();
  readonly #running = new Map<string, Set<string>>();

  async linkChild(link: RunLink): Promise<boolean> {
    if (this.#links.has(link.runId)) return false;
    const stored = structuredClone(link);
    this.#links.set(link.runId, stored);
    append(this.#children, link.parentRunId, stored);
    append(this.#byRoot, link.rootRunId, stored);
    const running = this.#running.get(link.parentRunId) ?? new Set<string>();
    running.add(link.runId);
    this.#running.set(link.parentRunId, running);
    return true;
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
    const running = this.#running.get(link.parentRunId);
    running?.delete(link.runId);
    return running === undefined || running.size === 0;
  }

  async runningChildren(parentRunId: string): Promise<string[]> {
    return [...(this.#running.get(parentRunId) ?? [])];
  }
}

function append(map: Map<string, RunLink[]>, key: string, link: RunLink): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [link]);
  else list.push(link);
}
