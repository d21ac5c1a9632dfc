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
 * Tails run streams with `XREAD BLOCK`, each reader on its own connection (a blocked
 * connection serves nobody else). `close()` ends every reader.
 *
 * A finished run's stream expires (retention): a reader that finds its stream gone while it
 * waits asks `finalEvent` for the run's last word, and ends with it when there is one.
 */
export class RedisEventReaders {
  readonly #base: Redis;
  readonly #blockMs: number;
  readonly #logger: () => Logger;
  readonly #open = new Set<Redis>();
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
    if (this.#closed) return;
    const reader = this.#base.duplicate();
    // A duplicate has no listeners: without one, ioredis prints every connection error.
    reader.on("error", (error) => this.#logger().warn({ err: error, key }, "event reader error"));
    this.#open.add(reader);
    let last = "0";
    try {
      while (!this.#closed) {
        let reply: unknown;
        try {
          reply = await reader.xread("COUNT", 100, "BLOCK", this.#blockMs, "STREAMS", key, last);
        } catch (error) {
          if (this.#closed) return;
          throw new BackendError(`Reading the event stream "${key}" failed.`, { cause: error });
        }
        const parsed = XReadReply.safeParse(reply);
        if (!parsed.success) throw new BackendError(`Unexpected XREAD reply on "${key}".`);
        if (parsed.data === null && (await reader.exists(key)) === 0) {
          const final = await finalEvent();
          if (final !== undefined) {
            yield final;
            return;
          }
        }
        for (const [, entries] of parsed.data ?? []) {
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
        }
      }
    } finally {
      this.#open.delete(reader);
      reader.disconnect();
    }
  }

  close(): void {
    this.#closed = true;
    for (const reader of this.#open) reader.disconnect();
    this.#open.clear();
  }
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
