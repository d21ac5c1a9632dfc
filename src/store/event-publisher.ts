import type { RunEvent } from "../engine/run-events.js";
import type { RunBackend } from "./backend.js";

export interface EventPublisher {
  /** Queues an event; events reach the stream in the order emitted. */
  emit(event: RunEvent): void;
  /** Waits until every emitted event is in the stream; throws the first failure. */
  flush(): Promise<void>;
}

/** Turns the engine's synchronous `emit` into ordered appends to a run's event stream. */
export function eventPublisher(backend: RunBackend, runId: string): EventPublisher {
  let tail: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | undefined;
  return {
    emit(event) {
      tail = tail.then(async () => {
        if (failure !== undefined) return;
        try {
          await backend.publish(runId, event);
        } catch (error) {
          failure = { error };
        }
      });
    },
    async flush() {
      await tail;
      if (failure !== undefined) throw failure.error;
    },
  };
}
