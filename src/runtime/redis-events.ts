import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { z } from "zod";
import type { RunEvent } from "../engine/run-events.js";
import { BackendError } from "./errors.js";
import { endsStream, RunEventSchema } from "./schemas.js";

const FIELD = "e";

const XReadReply = z
  .array(z.tuple([z.string(), z.array(z.tuple([z.string(), z.array(z.string())]))]))
  .nullable();

/**
 * Appends one event to a run's stream, trimmed to about `maxLength` entries; with `expireMs`
 * (a finished run's last event) the stream expires that long after, in the same transaction.
 */
export async function appendEvent(
  redis: Redis,
  key: string,
  event: RunEvent,
  options: { maxLength: number; expireMs?: number },
): Promise<void> {
  const json = JSON.stringify(event);
  if (options.expireMs === undefined) {
    await redis.xadd(key, "MAXLEN", "~", options.maxLength, "*", FIELD, json);
    return;
  }
  const replies = await redis
    .multi()
    .xadd(key, "MAXLEN", "~", options.maxLength, "*", FIELD, json)
    .pexpire(key, options.expireMs)
    .exec();
  const failed = replies?.find(([error]) => error !== null);
  if (replies === null || failed !== undefined) {
    throw new BackendError(`Appending to the event stream "${key}" failed.`, {
      cause: failed?.[0],
    });
  }
}

/**
 * Tails run streams for any number of readers over one blocking connection.
 *
 * A reader reads its stream without blocking on the backend's command connection (with an
 * `EXISTS` in the same round trip); when nothing is new it waits for the dispatcher, which runs
 * one `XREAD BLOCK` over every awaited stream on a connection of its own and wakes the readers
 * of a stream that got an entry after their position (or all of them after `blockMs`, so a
 * stream that expired meanwhile is noticed). A reader that starts waiting while that `XREAD` is
 * blocked restarts it (`CLIENT UNBLOCK`), so it is never awaited with a stale set of streams for
 * longer than a round trip. `close()` ends every reader and the dispatcher's connection.
 *
 * A finished run's stream expires (retention): a reader that finds its stream gone asks
 * `finalEvent` for the run's last word, and ends with it when there is one.
 */
export class RedisEventReaders {
  readonly #base: Redis;
  readonly #blockMs: number;
  readonly #logger: () => Logger;
  readonly #waiting = new Map<string, Set<Waiter>>();
  #connection: ReaderConnection | undefined;
  /** Counts the dispatcher's `XREAD`s; `blocked` is the one in flight, if any. */
  #round = 0;
  #blocked: number | undefined;
  #running = false;
  #unblocking = false;
  /** A reader started waiting while an unblock was under way: restart once more after it. */
  #restartAgain = false;
  #closed = false;

  constructor(base: Redis, blockMs: number, logger: () => Logger) {
    this.#base = base;
    this.#blockMs = blockMs;
    this.#logger = logger;
  }

  async *read(
    key: string,
    finalEvent: () => Promise<RunEvent | undefined> = async () => undefined,
  ): AsyncGenerator<RunEvent> {
    let last = "0";
    /** Entries the dispatcher read for this reader (from its position) while it waited. */
    let delivered: readonly Entry[] | undefined;
    while (!this.#closed) {
      if (delivered !== undefined) {
        const entries = delivered;
        delivered = undefined;
        for (const [id, fields] of entries) {
          last = id;
          const event = parseEntry(fields);
          if (event === undefined) {
            this.#logger().warn({ key, id }, "skipped a malformed run event");
            continue;
          }
          yield event;
          if (endsStream(event)) return;
        }
        continue;
      }
      let replies: [Error | null, unknown][] | null;
      try {
        replies = await this.#base
          .pipeline()
          .xread("COUNT", 100, "STREAMS", key, last)
          .exists(key)
          .exec();
      } catch (error) {
        if (this.#closed) return;
        throw new BackendError(`Reading the event stream "${key}" failed.`, { cause: error });
      }
      const failed = replies?.find(([error]) => error !== null)?.[0];
      if (replies === null || failed !== undefined) {
        if (this.#closed) return;
        throw new BackendError(`Reading the event stream "${key}" failed.`, { cause: failed });
      }
      const parsed = XReadReply.safeParse(replies[0]?.[1]);
      if (!parsed.success) throw new BackendError(`Unexpected XREAD reply on "${key}".`);
      if (parsed.data === null) {
        if (replies[1]?.[1] === 0) {
          let final: RunEvent | undefined;
          try {
            final = await finalEvent();
          } catch (error) {
            if (this.#closed) return;
            throw error;
          }
          if (final !== undefined) {
            yield final;
            return;
          }
        }
        delivered = await this.#wait(key, last);
        continue;
      }
      delivered = parsed.data.flatMap(([, entries]) => entries);
    }
  }

  close(): void {
    this.#closed = true;
    for (const waiters of this.#waiting.values()) {
      for (const waiter of waiters) waiter.wake();
    }
    this.#waiting.clear();
    this.#connection?.redis.disconnect();
    this.#connection = undefined;
  }

  /**
   * Resolves when `key` may have an entry after `last` (with the entries after `last` when the
   * dispatcher read them), after `blockMs`, or on close.
   */
  #wait(key: string, last: string): Promise<readonly Entry[] | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let waiters = this.#waiting.get(key);
      if (waiters === undefined) {
        waiters = new Set();
        this.#waiting.set(key, waiters);
      }
      const waiter: Waiter = {
        last,
        wake: (entries) => {
          const current = this.#waiting.get(key);
          current?.delete(waiter);
          if (current?.size === 0) this.#waiting.delete(key);
          resolve(entries);
        },
      };
      waiters.add(waiter);
      if (this.#running) this.#restart();
      else void this.#dispatch();
    });
  }

  #reader(): ReaderConnection {
    if (this.#connection === undefined) {
      const redis = this.#base.duplicate({ enableAutoPipelining: false });
      // A duplicate has no listeners: without one, ioredis prints every connection error.
      redis.on("error", (error) => this.#logger().warn({ err: error }, "event reader error"));
      const connection = { redis, clientId: Promise.resolve(-1) };
      const identify = (): void => {
        connection.clientId = redis.client("ID").then(Number, () => -1);
      };
      // A reconnected client has a new id.
      redis.on("ready", identify);
      identify();
      this.#connection = connection;
    }
    return this.#connection;
  }

  /** One `XREAD BLOCK` over every awaited stream at a time, until nobody waits. */
  async #dispatch(): Promise<void> {
    this.#running = true;
    try {
      while (!this.#closed && this.#waiting.size > 0) {
        const keys = [...this.#waiting.keys()];
        const positions = keys.map((key) => oldest(this.#waiting.get(key)));
        const round = ++this.#round;
        let reply: unknown;
        try {
          const { redis } = this.#reader();
          this.#blocked = round;
          reply = await redis.xread(
            "COUNT",
            100,
            "BLOCK",
            this.#blockMs,
            "STREAMS",
            ...keys,
            ...positions,
          );
        } catch (error) {
          if (this.#closed) return;
          this.#logger().warn({ err: error }, "reading the event streams failed");
          // Every reader reads again on the command connection, which reports its own failure.
          this.#wakeAll();
          continue;
        } finally {
          this.#blocked = undefined;
        }
        const restarted = this.#restarted.delete(round);
        const parsed = XReadReply.safeParse(reply);
        if (!parsed.success || parsed.data === null) {
          // Timed out, or restarted for new readers (which does not wake the others).
          if (!restarted) this.#wakeAll();
          continue;
        }
        for (const [key, entries] of parsed.data) {
          const position = positions[keys.indexOf(key)];
          const newest = entries.at(-1)?.[0];
          if (newest === undefined) continue;
          for (const waiter of [...(this.#waiting.get(key) ?? [])]) {
            // Read from this waiter's position: hand the entries over; else it reads again.
            if (waiter.last === position) waiter.wake(entries);
            else if (compareIds(waiter.last, newest) < 0) waiter.wake();
          }
        }
      }
    } finally {
      this.#running = false;
    }
  }

  readonly #restarted = new Set<number>();

  /** Unblocks the dispatcher's `XREAD` in flight so that it includes the streams added since. */
  #restart(): void {
    if (this.#connection === undefined) return;
    if (this.#unblocking) {
      this.#restartAgain = true;
      return;
    }
    this.#unblocking = true;
    const { clientId } = this.#connection;
    const unblock = async (): Promise<void> => {
      // The XREAD may be sent but not yet blocked at the server: try again until it is, or it returned.
      for (let attempt = 0; attempt < 100; attempt += 1) {
        const round = this.#blocked;
        if (round === undefined || this.#closed) return;
        this.#restarted.add(round);
        const done = await this.#base.client("UNBLOCK", await clientId);
        if (done === 1 || this.#blocked !== round) return;
        this.#restarted.delete(round);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    unblock()
      .catch((error: unknown) =>
        this.#logger().warn({ err: error }, "restarting the reader failed"),
      )
      .finally(() => {
        this.#unblocking = false;
        if (this.#restartAgain) {
          this.#restartAgain = false;
          this.#restart();
        }
      });
  }

  #wakeAll(): void {
    for (const waiters of [...this.#waiting.values()]) {
      for (const waiter of [...waiters]) waiter.wake();
    }
  }
}

interface ReaderConnection {
  readonly redis: Redis;
  clientId: Promise<number>;
}

/** A stream entry as `XREAD` returns it: its id and its fields. */
type Entry = [string, string[]];

interface Waiter {
  /** The id of the last entry the reader saw ("0": none). */
  readonly last: string;
  wake(entries?: readonly Entry[]): void;
}

/** The earliest position of a stream's waiters. */
function oldest(waiters: ReadonlySet<Waiter> | undefined): string {
  let found: string | undefined;
  for (const waiter of waiters ?? []) {
    if (found === undefined || compareIds(waiter.last, found) < 0) found = waiter.last;
  }
  return found ?? "0";
}

/** Orders stream entry ids (`<ms>-<seq>`, or "0"). */
function compareIds(first: string, second: string): number {
  const [firstMs = 0n, firstSeq = 0n] = first.split("-").map((part) => BigInt(part));
  const [secondMs = 0n, secondSeq = 0n] = second.split("-").map((part) => BigInt(part));
  if (firstMs !== secondMs) return firstMs < secondMs ? -1 : 1;
  if (firstSeq !== secondSeq) return firstSeq < secondSeq ? -1 : 1;
  return 0;
}

function parseEntry(fields: readonly string[]): RunEvent | undefined {
  const index = fields.indexOf(FIELD);
  const json = index >= 0 ? fields[index + 1] : undefined;
  if (json === undefined) return undefined;
  try {
    const parsed = RunEventSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
