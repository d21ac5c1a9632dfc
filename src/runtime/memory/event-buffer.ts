import type { RunEvent } from "../../engine/run-events.js";
import type { EventPage, NumberedEvent } from "../../store/run-feeds.js";
import { endsStream } from "../../store/schemas.js";

interface Log {
  /** Events dropped from the front to keep the log bounded. */
  dropped: number;
  items: RunEvent[];
  /** Readers waiting for the next event; made by the first (most runs' logs have none). */
  waiters: Set<() => void> | undefined;
}

/**
 * Each run's events in memory, bounded to the last `maxLength`: readers start at the oldest
 * kept event and wait for more, as readers of the Redis backend's capped event lists do.
 */
export class MemoryEventBuffer {
  readonly #logs = new Map<string, Log>();
  readonly #maxLength: number;
  #closed = false;

  constructor(maxLength: number) {
    this.#maxLength = maxLength;
  }

  publish(runId: string, event: RunEvent): void {
    const log = this.#log(runId);
    const copy = structuredClone(event);
    // A first event gets an array of its own size (a push onto [] reserves 17 slots): a parked
    // or waiting run's log holds one event.
    if (log.items.length === 0) log.items = [copy];
    else log.items.push(copy);
    if (log.items.length > this.#maxLength) {
      log.items.shift();
      log.dropped += 1;
    }
    this.#wake(log);
  }

  async *read(runId: string): AsyncGenerator<RunEvent> {
    for await (const { event } of this.readFrom(runId, 0)) yield event;
  }

  /** The run's events from `from` on, each with its position, live, ending after `result`. */
  async *readFrom(runId: string, from: number): AsyncGenerator<NumberedEvent> {
    const log = this.#log(runId);
    let position = from;
    while (!this.#closed) {
      position = Math.max(position, log.dropped);
      const event = log.items[position - log.dropped];
      if (event === undefined) {
        await new Promise<void>((resolve) => {
          log.waiters ??= new Set();
          log.waiters.add(resolve);
        });
        continue;
      }
      position += 1;
      yield { position: position - 1, event: structuredClone(event) };
      if (endsStream(event)) return;
    }
  }

  /** Up to `limit` events kept now from `after` on, without waiting (none for an unknown run). */
  page(runId: string, after: number, limit: number): EventPage {
    const log = this.#logs.get(runId);
    if (log === undefined) return { events: [], next: after };
    const start = Math.max(after, log.dropped);
    const events = log.items
      .slice(start - log.dropped, start - log.dropped + limit)
      .map((event) => structuredClone(event));
    return { events, next: events.length === 0 ? Math.max(after, start) : start + events.length };
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
      log = { dropped: 0, items: [], waiters: undefined };
      this.#logs.set(runId, log);
    }
    return log;
  }

  #wake(log: Log): void {
    const { waiters } = log;
    log.waiters = undefined;
    for (const resolve of waiters ?? []) resolve();
  }
}
