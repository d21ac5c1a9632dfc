import type { Logger } from "pino";
import { z } from "zod";
import { loggableError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import type { RunEvent } from "../engine/run-events.js";
import { BackendError } from "../store/errors.js";
import type { EventPage, NumberedEvent } from "../store/run-feeds.js";
import { endsStream, RunEventSchema } from "../store/schemas.js";
import { type RedisClient, subscriberOf } from "./redis-connection.js";
import { APPEND_EVENTS, READ_EVENTS } from "./redis-scripts.js";
import { SubscriptionBatches } from "./subscription-batches.js";

const ReadReply = lazySchema(() =>
  z.tuple([z.number(), z.number(), z.array(z.string()), z.number()]),
);

/** How many events a reader takes per read. */
const BATCH = 100;

export interface EventKeys {
  /** The run's event list (also the name of its wake-up channel). */
  events: string;
  /** The run's hash (its `etrim` field). */
  run: string;
}

/** Appends events to a run's list and wakes its readers, in one atomic write. */
export async function appendEvents(
  redis: RedisClient,
  keys: EventKeys,
  events: readonly RunEvent[],
  options: { maxLength: number },
): Promise<void> {
  await APPEND_EVENTS.run(
    redis,
    [keys.events, keys.run],
    [options.maxLength, ...events.map((event) => JSON.stringify(event))],
  );
}

/** Up to `limit` events stored now from position `after` on (`finalEvent` as in `read`). */
export async function readEventPage(
  redis: RedisClient,
  keys: EventKeys,
  after: number,
  limit: number,
  finalEvent: () => Promise<RunEvent | undefined>,
): Promise<EventPage> {
  const [first, , entries, final] = ReadReply.parse(
    await READ_EVENTS.run(redis, [keys.events, keys.run], [after, limit]),
  );
  if (final === 1 && after === 0) {
    const last = await finalEvent();
    if (last !== undefined) return { events: [last], next: 1 };
  }
  const events = entries.map(parseEvent).filter((event) => event !== undefined);
  return { events, next: entries.length === 0 ? Math.max(after, first) : first + entries.length };
}

export interface ReadOptions {
  /** Subscribe to the run's channel before the first read (the run is expected to go on). */
  subscribeFirst?: boolean;
}

// A run's events are a Redis list bounded to its last `maxLength` entries (see APPEND_EVENTS).
// A list, not a stream: Redis preallocates 4 KB for a stream's first node, more than all the
// rest of a parked run in Redis.

/**
 * Tails run event lists for any number of readers over one subscriber connection.
 *
 * A reader reads its list on the backend's command connection; when nothing is new, it
 * subscribes to the list's channel (once, on the shared subscriber connection), reads again,
 * and from then on waits for a wake-up: a message on the channel, the subscriber's reconnection
 * (messages may have been lost meanwhile), or `pollMs` without either. Reading again after the
 * subscription is acknowledged means no append is missed between a read and a wait.
 *
 * A reader that finds no list of a run that is finished (or has no status) asks `finalEvent` for
 * the run's last word, and ends with it when there is one (a finished run that never wrote a
 * log).
 */
export class RedisEventReaders {
  readonly #base: RedisClient;
  readonly #pollMs: number;
  readonly #logger: () => Logger;
  readonly #channels = new Map<string, Channel>();
  /** SUBSCRIBE and UNSUBSCRIBE, one of each per turn of the event loop. */
  readonly #batches = new SubscriptionBatches({
    subscribe: (names) => {
      const redis = this.#connection();
      return this.#whenReady(redis).then(() => redis.subscribe(...names));
    },
    unsubscribe: (names) => {
      this.#subscriber?.unsubscribe(...names).catch((error: unknown) => {
        this.#logger().warn(
          { err: loggableError(error), channels: names },
          "unsubscribing from run events failed",
        );
      });
    },
  });
  #subscriber: RedisClient | undefined;
  /** Shared by the subscriptions that wait for the subscriber to be ready (one listener pair). */
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(base: RedisClient, pollMs: number, logger: () => Logger) {
    this.#base = base;
    this.#pollMs = pollMs;
    this.#logger = logger;
  }

  async *read(
    keys: EventKeys,
    finalEvent: () => Promise<RunEvent | undefined> = async () => undefined,
    options: ReadOptions = {},
  ): AsyncGenerator<RunEvent> {
    for await (const { event } of this.readFrom(keys, 0, finalEvent, options)) yield event;
  }

  /**
   * As `read`, from position `from` on, each event with its position; the final event of a run
   * without a log counts as position 0.
   */
  async *readFrom(
    keys: EventKeys,
    from: number,
    finalEvent: () => Promise<RunEvent | undefined> = async () => undefined,
    options: ReadOptions = {},
  ): AsyncGenerator<NumberedEvent> {
    let next = from;
    let channel: Channel | undefined;
    // A run whose events are still to come would find nothing new at the first read, then
    // subscribe and read again: subscribed at once, one read does.
    if (options.subscribeFirst === true && !this.#closed) {
      channel = await this.#subscribe(keys.events);
    }
    /** The channel's wake-ups up to this one are accounted for. */
    let seen = 0;
    /** Events the wake-ups carried, from `next` on; read from the list when undefined. */
    let handed: string[] | undefined;
    try {
      while (!this.#closed) {
        const delivered = handed !== undefined;
        let first = next;
        /** 1 when the run has no log and may have a last word without it. */
        let final = 0;
        let entries: string[];
        if (handed !== undefined) {
          entries = handed;
          handed = undefined;
        } else {
          // Taken before reading: a wake-up that comes while the read is under way is not lost.
          seen = channel?.version ?? 0;
          try {
            [first, , entries, final] = ReadReply.parse(
              await READ_EVENTS.run(this.#base, [keys.events, keys.run], [next, BATCH]),
            );
          } catch (error) {
            if (this.#closed) return;
            throw new BackendError(`Reading the events "${keys.events}" failed.`, {
              cause: error,
            });
          }
        }
        if (entries.length > 0) {
          next = first + entries.length;
          for (const [offset, json] of entries.entries()) {
            const event = parseEvent(json);
            if (event === undefined) {
              this.#logger().warn(
                { key: keys.events, position: first + offset },
                "skipped a malformed run event",
              );
              continue;
            }
            yield { position: first + offset, event };
            if (endsStream(event)) return;
          }
          // The list may hold more than one read returned; what wake-ups carried is all there is.
          if (!delivered) continue;
        } else if (final === 1) {
          let last: RunEvent | undefined;
          try {
            last = await finalEvent();
          } catch (error) {
            if (this.#closed) return;
            throw error;
          }
          if (last !== undefined) {
            if (from === 0) yield { position: 0, event: last };
            return;
          }
        }
        if (channel === undefined) {
          channel = await this.#subscribe(keys.events);
          continue; // read again now that no append can go unnoticed
        }
        await this.#wait(channel, seen);
        const carried = carriedSince(channel, seen, next);
        if (carried !== undefined) {
          handed = carried;
          seen = channel.version;
        }
      }
    } finally {
      if (channel !== undefined) this.#unsubscribe(keys.events, channel);
    }
  }

  close(): void {
    this.#closed = true;
    this.#batches.close();
    for (const channel of this.#channels.values()) channel.wake();
    this.#channels.clear();
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
  }

  #connection(): RedisClient {
    if (this.#subscriber === undefined) {
      // Connected before the first SUBSCRIBE: a subscribing connection refuses the commands
      // ioredis sends while it connects.
      const subscriber = subscriberOf(this.#base);
      // A duplicate has no listeners: without one, ioredis prints every connection error.
      subscriber.on("error", (error) =>
        this.#logger().warn({ err: loggableError(error) }, "event subscriber error"),
      );
      subscriber.on("message", (name: string, message: string) =>
        this.#channels.get(name)?.wake(message),
      );
      // Resubscribed after a reconnection (ioredis does it): what was published meanwhile is lost.
      // A lost connection wakes the readers too: their next read tells whether Redis answers.
      const wakeAll = () => {
        for (const channel of this.#channels.values()) channel.wake();
      };
      subscriber.on("ready", wakeAll);
      subscriber.on("close", wakeAll);
      // A failed first attempt is logged by the "error" listener; ioredis keeps trying.
      subscriber.connect().catch(() => {});
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }

  async #subscribe(name: string): Promise<Channel> {
    let channel = this.#channels.get(name);
    if (channel === undefined) {
      const created = newChannel(this.#batches.join(name));
      this.#channels.set(name, created);
      channel = created;
    }
    channel.readers += 1;
    try {
      await channel.subscribed;
    } catch (error) {
      this.#unsubscribe(name, channel);
      if (this.#closed) return channel;
      throw new BackendError(`Subscribing to the events "${name}" failed.`, { cause: error });
    }
    return channel;
  }

  #whenReady(redis: RedisClient): Promise<void> {
    if (redis.status === "ready") return Promise.resolve();
    this.#ready ??= whenReady(redis).finally(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }

  #unsubscribe(name: string, channel: Channel): void {
    channel.readers -= 1;
    if (channel.readers > 0 || this.#channels.get(name) !== channel) return;
    this.#channels.delete(name);
    this.#batches.leave(name);
  }

  /** Resolves once the channel was woken after `seen`, after `pollMs`, or on close. */
  async #wait(channel: Channel, seen: number): Promise<void> {
    if (this.#closed || channel.version !== seen) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        channel.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.#pollMs);
      channel.waiters.add(done);
    });
  }
}

/** How many recent wake-ups a channel keeps for its readers to take events from. */
const KEPT_WAKE_UPS = 32;

/**
 * One subscribed channel: its readers, a counter of its wake-ups, the last few wake-ups'
 * messages, and who waits for the next.
 */
interface Channel {
  readonly subscribed: Promise<unknown>;
  readers: number;
  version: number;
  /** The messages of the last wake-ups (undefined for one without a message), oldest first. */
  readonly recent: Array<string | undefined>;
  readonly waiters: Set<() => void>;
  wake(message?: string): void;
}

function newChannel(subscribed: Promise<unknown>): Channel {
  const channel: Channel = {
    subscribed,
    readers: 0,
    version: 0,
    recent: [],
    waiters: new Set(),
    wake(message) {
      channel.version += 1;
      channel.recent.push(message);
      if (channel.recent.length > KEPT_WAKE_UPS) channel.recent.shift();
      const waiting = [...channel.waiters];
      channel.waiters.clear();
      for (const resolve of waiting) resolve();
    },
  };
  // Awaited by each reader; a failure is reported there, not as an unhandled rejection.
  subscribed.catch(() => {});
  return channel;
}

/**
 * The events that the channel's wake-ups after `seen` carried, from absolute position `next`
 * on (see appendEventsLua): undefined when the list must be read instead — no wake-up came (a
 * poll), one carried no events (a reconnection, or events too heavy to carry), one is no longer
 * kept, or they leave a gap after `next`.
 */
function carriedSince(channel: Channel, seen: number, next: number): string[] | undefined {
  const count = channel.version - seen;
  if (count <= 0 || count > channel.recent.length) return undefined;
  const entries: string[] = [];
  let cursor = next;
  for (const message of channel.recent.slice(-count)) {
    const lines = message?.split("\n");
    if (lines === undefined || lines.length < 2) return undefined;
    const position = Number(lines[0]);
    if (!Number.isSafeInteger(position) || position > cursor) return undefined;
    const events = lines.slice(1);
    const skip = cursor - position;
    if (skip < events.length) {
      entries.push(...events.slice(skip));
      cursor = position + events.length;
    }
  }
  return entries;
}

/** Resolves once `redis` is connected and ready; rejects if it is closed first. */
function whenReady(redis: RedisClient): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const ready = (): void => {
      redis.off("end", ended);
      resolve();
    };
    const ended = (): void => {
      redis.off("ready", ready);
      reject(new Error("the connection was closed"));
    };
    redis.once("ready", ready);
    redis.once("end", ended);
  });
}

function parseEvent(json: string): RunEvent | undefined {
  try {
    const parsed = RunEventSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
