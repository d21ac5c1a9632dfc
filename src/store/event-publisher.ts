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
  const queued: RunEvent[] = [];
  let sending: Promise<void> | undefined;
  let scheduled: NodeJS.Immediate | undefined;
  let failure: { error: unknown } | undefined;

  const pump = async (): Promise<void> => {
    while (queued.length > 0 && failure === undefined) {
      const batch = coalesceDeltas(queued.splice(0));
      try {
        await backend.publish(runId, batch);
      } catch (error) {
        failure = { error };
      }
    }
    sending = undefined;
  };
  const send = () => {
    clearImmediate(scheduled);
    scheduled = undefined;
    sending ??= pump();
  };
  const settle = async () => {
    while (sending !== undefined) await sending;
    if (failure !== undefined) throw failure.error;
  };

  return {
    emit(event) {
      if (failure !== undefined) return;
      queued.push(event);
      if (sending === undefined) scheduled ??= setImmediate(send);
    },
    async flush() {
      if (scheduled !== undefined) send();
      await settle();
    },
    async take() {
      if (backend.publishesInOrder === true) {
        if (failure !== undefined) throw failure.error;
      } else {
        await settle();
      }
      clearImmediate(scheduled);
      scheduled = undefined;
      return coalesceDeltas(queued.splice(0));
    },
  };
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
