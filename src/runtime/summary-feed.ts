import { EventEmitter, on } from "node:events";
import type { RunSummary } from "../store/summary.js";

const CHANGE = "change";

/**
 * Fans run summaries out to any number of listeners in this process. Each listener buffers what
 * it has not read yet (Node's `events.on`), so a slow reader misses nothing, and ends when its
 * signal aborts.
 */
export class SummaryFeed {
  readonly #emitter = new EventEmitter();

  constructor() {
    // One listener per open dashboard stream: many are expected.
    this.#emitter.setMaxListeners(0);
  }

  get listening(): boolean {
    return this.#emitter.listenerCount(CHANGE) > 0;
  }

  emit(summary: RunSummary): void {
    this.#emitter.emit(CHANGE, summary);
  }

  /** The summaries emitted from now on, until `signal` aborts (then the iteration just ends). */
  listen(signal: AbortSignal): AsyncIterable<RunSummary> {
    // Attached now, not at the first read: what is emitted before then is buffered.
    const changes = on(this.#emitter, CHANGE, { signal });
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for await (const [summary] of changes) yield summary as RunSummary;
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
      },
    };
  }
}
