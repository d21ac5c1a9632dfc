import { Registration } from "../core/registration.js";
import { type MiddlewareLike, type MiddlewareStage, overrides } from "./middleware.js";

const STAGES: readonly MiddlewareStage[] = [
  "beforeLlmCall",
  "afterLlmCall",
  "beforeToolExecution",
  "afterToolExecution",
];

/**
 * The ordered middleware of an agent. Added A then B: every stage runs A, then B, and B
 * receives A's return value. A run works on the list as it was when the run started.
 */
export class MiddlewarePipeline {
  #entries: readonly MiddlewareLike[] = [];

  constructor(middleware: Iterable<MiddlewareLike> = []) {
    for (const each of middleware) this.add(each);
  }

  /** Appends middleware; the returned handle's `close()` removes it. */
  add(middleware: MiddlewareLike): Registration {
    if (typeof middleware !== "object" || middleware === null) {
      throw new TypeError("Middleware must be an object with any of the four stage methods.");
    }
    // Copy on write: runs in progress keep the array they started with.
    this.#entries = [...this.#entries, middleware];
    return new Registration(() => {
      const index = this.#entries.indexOf(middleware);
      if (index >= 0) this.#entries = this.#entries.toSpliced(index, 1);
    });
  }

  get size(): number {
    return this.#entries.length;
  }

  /** An immutable view of the current order, with the middleware that work at each stage. */
  snapshot(): PipelineSnapshot {
    return snapshotOf(this.#entries);
  }
}

/** A frozen view of a pipeline for one run: per stage, the middleware that override it. */
export type PipelineSnapshot = { readonly [S in MiddlewareStage]: readonly MiddlewareLike[] };

const cache = new WeakMap<readonly MiddlewareLike[], PipelineSnapshot>();

function snapshotOf(entries: readonly MiddlewareLike[]): PipelineSnapshot {
  let found = cache.get(entries);
  if (found === undefined) {
    const byStage = Object.fromEntries(
      STAGES.map((stage) => [stage, entries.filter((each) => overrides(each, stage))]),
    ) as unknown as PipelineSnapshot;
    found = Object.freeze(byStage);
    cache.set(entries, found);
  }
  return found;
}
