import type { RunEvent } from "../../engine/run-events.js";
import type { StoredCheckpoint } from "../../store/checkpoint.js";
import type { EventLog } from "../../store/event-log.js";
import { decodeCheckpoint } from "../../store/record/checkpoint-codec.js";
import type { EventPage, NumberedEvent } from "../../store/run-feeds.js";
import { isTerminal, type RunRecord } from "../../store/schemas.js";
import { appendEvents, RedisEventReaders, readEventPage } from "../redis-events.js";
import { redisRecorderSink } from "../redis-run-extras.js";
import type { RedisContext } from "./context.js";

/**
 * The event log in Redis: a capped list per run read live (woken by message, backed by a slow
 * poll), the run's checkpoint list, and its flight recording list. A finished run without a
 * log (none was ever written) reads as its final result.
 */
export class RedisEventLog implements EventLog {
  readonly recordings: ReturnType<typeof redisRecorderSink>;
  readonly #context: RedisContext;
  readonly #readers: RedisEventReaders;
  readonly #loadRun: (runId: string) => Promise<RunRecord | undefined>;

  constructor(context: RedisContext, loadRun: (runId: string) => Promise<RunRecord | undefined>) {
    this.#context = context;
    this.#loadRun = loadRun;
    this.recordings = redisRecorderSink(context.redis, context.keys);
    // Wake-ups come by message; the poll only backs up a message lost in a way nobody saw.
    this.#readers = new RedisEventReaders(context.redis, 30_000, () => context.logger);
  }

  get publishesInOrder(): boolean {
    return this.#context.stepsFollowWrites;
  }

  async publish(runId: string, events: RunEvent | readonly RunEvent[]): Promise<void> {
    const list = Array.isArray(events) ? (events as readonly RunEvent[]) : [events as RunEvent];
    // On one Redis, on the saves' connection: a save issued after an append is applied after it.
    await appendEvents(this.#context.stepRedis, this.#keysOf(runId), list, {
      maxLength: this.#context.maxEvents,
    });
  }

  async *events(runId: string, options: { live?: boolean } = {}): AsyncGenerator<RunEvent> {
    yield* this.#readers.read(this.#keysOf(runId), () => this.#finalEvent(runId), {
      subscribeFirst: options.live === true,
    });
  }

  followEvents(runId: string, after: number): AsyncIterable<NumberedEvent> {
    return this.#readers.readFrom(this.#keysOf(runId), after, () => this.#finalEvent(runId));
  }

  async readEvents(runId: string, after: number, limit: number): Promise<EventPage> {
    return readEventPage(this.#context.redis, this.#keysOf(runId), after, limit, () =>
      this.#finalEvent(runId),
    );
  }

  async checkpoints(runId: string): Promise<StoredCheckpoint[]> {
    const { redis, keys } = this.#context;
    const entries = await redis.lrange(keys.checkpoints(runId), 0, -1);
    return entries.map((json) => decodeCheckpoint(json, `A checkpoint of run "${runId}"`));
  }

  /** Ends every live reader of this process. */
  close(): void {
    this.#readers.close();
  }

  #keysOf(runId: string) {
    const { keys } = this.#context;
    return { events: keys.events(runId), run: keys.run(runId) };
  }

  /** The final result of a finished run that has no event log (none was ever written). */
  async #finalEvent(runId: string): Promise<RunEvent | undefined> {
    const record = await this.#loadRun(runId);
    return record !== undefined && isTerminal(record.status) && record.result !== null
      ? { type: "result", result: record.result }
      : undefined;
  }
}
