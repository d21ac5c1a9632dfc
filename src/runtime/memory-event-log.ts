import type { RunEvent } from "../engine/run-events.js";
import { endsStream } from "../store/schemas.js";

interface Log {
  /** Events dropped from the front to keep the log bounded. */
  dropped: number;
  items: RunEvent[];
  waiters: Set<() => void>;
}

/**
 * Each run's events in memory, bounded to the last `maxLength`: readers start at the oldest
 * kept event and wait for more, as readers of the Redis backend's capped event lists do.
 */
export class MemoryEventLog {
  readonly #logs = new Map<string, Log>();
  readonly #maxLength: number;
  #closed = false;

  constructor(maxLength: number) {
    this.#maxLength = maxLength;
  }

  publish(runId: string, event: RunEvent): void {
    const log = this.#log(runId);
    log.items.push(structuredClone(event));
    if (log.items.length > this.#maxLength) {
      log.items.shift();
      log.dropped += 1;
    }
    this.#wake(log);
  }

  async *read(runId: string): AsyncGenerator<RunEvent> {
    const log = this.#log(runId);
    let position = 0;
    while (!this.#closed) {
      position = Math.max(position, log.dropped);
      const event = log.items[position - log.dropped];
      if (event === undefined) {
        await new Promise<void>((resolve) => log.waiters.add(resolve));
        continue;
      }
      position += 1;
      yield structuredClone(event);
      if (endsStream(event)) return;
    }
  }

  /** True when the run has a log (it published, or somebody reads it). */
  has(runId: string): boolean {
    return this.#logs.has(runId);
  }

  /** Forgets a run's log (retention); readers already on it keep what they have. */
  drop(runId: string): void {
    this.#logs.delete(runId);
  }

  /** Ends every reader that is waiting. */
  close(): void {
    this.#closed = true;
    for (const log of this.#logs.values()) this.#wake(log);
  }

  #log(runId: string): Log {
    let log = this.#logs.get(runId);
    if (log === undefined) {
      log = { dropped: 0, items: [], waiters: new Set() };
      this.#logs.set(runId, log);
    }
    return log;
  }

  #wake(log: Log): void {
    const waiters = [...log.waiters];
    log.waiters.clear();
    for (const resolve of waiters) resolve();
  }
}
