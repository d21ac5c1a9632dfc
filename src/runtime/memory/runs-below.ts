/**
 * A run in the runs below another: its child, running, finished or released (its call started
 * none, its run is stored: listed, not counted), or (on a root) deeper.
 */
export type Below = "running" | "finished" | "released" | "descendant";

/** How many runs below are kept as pairs before they move to a Map. */
const FEW = 8;

/**
 * The runs below one run, each with its state (in the order they came), and how many of its
 * children run. Most parents wait for one child: while few, the runs are id/state pairs in an
 * array of their own size (~100 B for one, where an object, a Map and its table were ~220 B);
 * beyond `FEW`, a Map (a root's descendants can be thousands).
 */
export class RunsBelow {
  running = 0;
  /** id, state, id, state…, or the Map they moved to. */
  #runs: string[] | Map<string, Below> = [];

  get size(): number {
    const runs = this.#runs;
    return runs instanceof Map ? runs.size : runs.length / 2;
  }

  get(runId: string): Below | undefined {
    const runs = this.#runs;
    if (runs instanceof Map) return runs.get(runId);
    const at = pairOf(runs, runId);
    return at < 0 ? undefined : (runs[at + 1] as Below);
  }

  has(runId: string): boolean {
    return this.get(runId) !== undefined;
  }

  set(runId: string, state: Below): void {
    const runs = this.#runs;
    if (runs instanceof Map) {
      runs.set(runId, state);
      return;
    }
    const at = pairOf(runs, runId);
    if (at >= 0) runs[at + 1] = state;
    // A new array of its own size (a push or a spread would reserve 16 slots more).
    else if (runs.length < FEW * 2) this.#runs = runs.concat(runId, state);
    else this.#runs = new Map([...pairsOf(runs), [runId, state]]);
  }

  delete(runId: string): boolean {
    const runs = this.#runs;
    if (runs instanceof Map) return runs.delete(runId);
    const at = pairOf(runs, runId);
    if (at < 0) return false;
    runs.splice(at, 2);
    return true;
  }

  /** The runs and their states, a copy (the caller may change these as it walks them). */
  entries(): [string, Below][] {
    const runs = this.#runs;
    return runs instanceof Map ? [...runs] : pairsOf(runs);
  }
}

/** Where `runId`'s pair starts in `pairs`, or -1. */
function pairOf(pairs: readonly string[], runId: string): number {
  for (let at = 0; at < pairs.length; at += 2) if (pairs[at] === runId) return at;
  return -1;
}

function pairsOf(pairs: readonly string[]): [string, Below][] {
  const entries: [string, Below][] = [];
  for (let at = 0; at < pairs.length; at += 2) {
    entries.push([pairs[at] as string, pairs[at + 1] as Below]);
  }
  return entries;
}
