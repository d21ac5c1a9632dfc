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

/** Appends one event to a run's stream, trimmed to about `maxLength` entries. */
export async function appendEvent(
  redis: Redis,
  key: string,
  event: RunEvent,
  maxLength: number,
): Promise<void> {
  await redis.xadd(key, "MAXLEN", "~", maxLength, "*", FIELD, JSON.stringify(event));
}

/**
 * Tails run streams with `XREAD BLOCK`, each reader on its own connection (a blocked
 * connection serves nobody else). `close()` ends every reader.
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

  async *read(key: string): AsyncGenerator<RunEvent> {
    if (this.#closed) return;
    const reader = this.#base.duplicate();
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
