import type { RunEvent } from "../engine/run-events.js";
import type { RunBackend } from "./backend.js";

export interface EventPublisher {
  /** Queues an event; events reach the run's log in the order emitted, as soon as they can. */
  emit(event: RunEvent): void;
  /** Waits until every emitted event is in the log; throws the first failure. */
  flush(): Promise<void>;
  /**
   * Hands over the events not sent yet (deltas joined) for the caller to write with its own
   * write (a save), after everything sent: at once when the backend applies a run's appends
   * and saves in the order issued (`publishesInOrder`), else once the appends under way are
   * applied. Throws the first failure known by then (a later one, at `flush`).
   */
  take(): Promise<RunEvent[]>;
}

type Delta = Extract<RunEvent, { type: "text_delta" | "thinking_delta" }>;

const isDelta = (event: RunEvent): event is Delta =>
  event.type === "text_delta" || event.type === "thinking_delta";

/**
 * Turns the engine's synchronous `emit` into ordered appends to a run's event log, live: the
 * events of one turn of the event loop go out together once the code that emitted them yields
 * to it (deltas too: a stream's chunks that one socket read brought come in one turn), so that
 * a save right after them (`take`) carries them in its own write, as the save after a
 * provider's response carries its last deltas. Events emitted while an append is under way go
 * out together with the next one, consecutive deltas of one kind joined into one event, so a
 * fast stream costs a few appends and a few log entries instead of one per token.
 */
export function eventPublisher(backend: RunBackend, runId: string): EventPublisher {
  return new RunEventPublisher(backend, runId);
}

/**
 * One object, not a closure per part: a step held at its model call keeps its publisher alive
 * while it waits. `emit` is handed out on its own (`RunEnv.emit`), so it is bound once.
 */
class RunEventPublisher implements EventPublisher {
  readonly #backend: RunBackend;
  readonly #runId: string;
  readonly #queued: RunEvent[] = [];
  #sending: Promise<void> | undefined;
  #scheduled: NodeJS.Immediate | undefined;
  #failure: { error: unknown } | undefined;

  constructor(backend: RunBackend, runId: string) {
    this.#backend = backend;
    this.#runId = runId;
    this.emit = this.emit.bind(this);
  }

  emit(event: RunEvent): void {
    if (this.#failure !== undefined) return;
    this.#queued.push(event);
    if (this.#sending === undefined) this.#scheduled ??= setImmediate(() => this.#send());
  }

  async flush(): Promise<void> {
    if (this.#scheduled !== undefined) this.#send();
    await this.#settle();
  }

  async take(): Promise<RunEvent[]> {
    if (this.#backend.publishesInOrder === true) {
      if (this.#failure !== undefined) throw this.#failure.error;
    } else {
      await this.#settle();
    }
    clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    // Most saves follow no event of their own: no spliced and joined copies of none.
    return this.#queued.length === 0 ? [] : coalesceDeltas(this.#queued.splice(0));
  }

  #send(): void {
    clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    this.#sending ??= this.#pump();
  }

  async #pump(): Promise<void> {
    while (this.#queued.length > 0 && this.#failure === undefined) {
      const batch = coalesceDeltas(this.#queued.splice(0));
      try {
        await this.#backend.publish(this.#runId, batch);
      } catch (error) {
        this.#failure = { error };
      }
    }
    this.#sending = undefined;
  }

  async #settle(): Promise<void> {
    while (this.#sending !== undefined) await this.#sending;
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}

/** Joins each run of consecutive deltas of one kind into one delta with their text. */
export function coalesceDeltas(events: readonly RunEvent[]): RunEvent[] {
  const joined: RunEvent[] = [];
  for (const event of events) {
    const last = joined.at(-1);
    if (isDelta(event) && last !== undefined && isDelta(last) && last.type === event.type) {
      joined[joined.length - 1] = { type: event.type, text: last.text + event.text };
    } else {
      joined.push(event);
    }
  }
  return joined;
}
