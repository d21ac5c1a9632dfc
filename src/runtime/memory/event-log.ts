import type { RunEvent } from "../../engine/run-events.js";
import type { StoredCheckpoint } from "../../store/checkpoint.js";
import type { EventLog } from "../../store/event-log.js";
import { decodeCheckpoint, encodeCheckpoint } from "../../store/record/checkpoint-codec.js";
import type { EventPage, NumberedEvent } from "../../store/run-feeds.js";
import { isTerminal, type RunRecord } from "../../store/schemas.js";
import { MemoryEventBuffer } from "./event-buffer.js";
import { flat } from "./flat.js";
import { memoryRecorderStore } from "./recordings.js";

/**
 * The event log in memory: each run's bounded event buffer, its checkpoints and its flight
 * recordings. A finished run without a log (none was ever written) reads as its final result.
 */
export class MemoryEventLog implements EventLog {
  /** Appends and saves apply their events as they are called. */
  readonly publishesInOrder = true;
  readonly recordings = memoryRecorderStore();
  readonly #buffer: MemoryEventBuffer;
  /** The JSON of each `StoredCheckpoint` a run's saves appended. */
  readonly #checkpoints = new Map<string, string[]>();
  readonly #loadRun: (runId: string) => Promise<RunRecord | undefined>;

  constructor(options: {
    maxEventsPerRun: number;
    loadRun: (runId: string) => Promise<RunRecord | undefined>;
  }) {
    this.#buffer = new MemoryEventBuffer(options.maxEventsPerRun);
    this.#loadRun = options.loadRun;
  }

  async publish(runId: string, events: RunEvent | readonly RunEvent[]): Promise<void> {
    for (const event of Array.isArray(events) ? events : [events]) {
      this.append(runId, event as RunEvent);
    }
  }

  /** Appends at once (inside another role's atomic step). */
  append(runId: string, event: RunEvent): void {
    this.#buffer.publish(runId, event);
  }

  /** Appends a save's checkpoint (inside the save). */
  appendCheckpoint(runId: string, checkpoint: StoredCheckpoint): void {
    const checkpoints = this.#checkpoints.get(runId) ?? [];
    checkpoints.push(flat(encodeCheckpoint(checkpoint)));
    this.#checkpoints.set(runId, checkpoints);
  }

  async checkpoints(runId: string): Promise<StoredCheckpoint[]> {
    return (this.#checkpoints.get(runId) ?? []).map((json) =>
      decodeCheckpoint(json, `A checkpoint of run "${runId}"`),
    );
  }

  // Takes no `live` hint: here a stream listens as soon as it reads.
  async *events(runId: string): AsyncGenerator<RunEvent> {
    for await (const { event } of this.followEvents(runId, 0)) yield event;
  }

  async *followEvents(runId: string, after: number): AsyncGenerator<NumberedEvent> {
    if (!this.#buffer.has(runId)) {
      const final = await this.#finalEvent(runId);
      if (final !== undefined) {
        if (after === 0) yield { position: 0, event: final };
        return;
      }
    }
    yield* this.#buffer.readFrom(runId, after);
  }

  async readEvents(runId: string, after: number, limit: number): Promise<EventPage> {
    if (!this.#buffer.has(runId) && after === 0) {
      const final = await this.#finalEvent(runId);
      if (final !== undefined) return { events: [final], next: 1 };
    }
    return this.#buffer.page(runId, after, limit);
  }

  /** The final result of a finished run that has no event log. */
  async #finalEvent(runId: string): Promise<RunEvent | undefined> {
    const record = await this.#loadRun(runId);
    return record !== undefined && isTerminal(record.status) && record.result !== null
      ? { type: "result", result: record.result }
      : undefined;
  }

  /** Drops the run's events, checkpoints and recordings (prune). */
  forget(runId: string): void {
    this.#buffer.drop(runId);
    this.#checkpoints.delete(runId);
    this.recordings.drop(runId);
  }

  close(): void {
    this.#buffer.close();
  }
}
