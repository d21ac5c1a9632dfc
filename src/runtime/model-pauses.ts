import type { Logger } from "pino";
import { loggableError } from "../core/errors.js";
import { type RedisClient, subscriberOf } from "./redis-connection.js";

/**
 * Which models are paused (a provider said `rate_limited`), known in this process without a
 * Redis read before every model call: a pause is announced on a channel to every process, and
 * a model's pause is read from Redis once, when this process first asks about it after it
 * started listening (or listened again after a lost connection). While it does not listen,
 * every question reads Redis. A pause announced while the connection was down is read again on
 * reconnection; one that slips through costs one call that the provider refuses and pauses
 * again.
 */
export class PauseWatch {
  readonly #redis: RedisClient;
  readonly #channel: string;
  readonly #logger: () => Logger;
  /** When each model's pause ends (ms since the epoch), for the models read since listening. */
  readonly #until = new Map<string, number>();
  #subscriber: RedisClient | undefined;
  #listening: Promise<void> | undefined;
  #live = false;
  #closed = false;

  constructor(redis: RedisClient, channel: string, logger: () => Logger) {
    this.#redis = redis;
    this.#channel = channel;
    this.#logger = logger;
  }

  /** How long `key` stays paused (0: not paused); `read` asks Redis. */
  async remainingMs(key: string, read: () => Promise<number>): Promise<number> {
    if (!(await this.#listen())) return read();
    let until = this.#until.get(key);
    if (until === undefined) {
      const ms = await read();
      // A pause announced while the read was under way is kept if it ends later.
      until = Math.max(this.#until.get(key) ?? 0, Date.now() + ms);
      if (this.#live) this.#until.set(key, until);
    }
    return Math.max(0, until - Date.now());
  }

  /** Tells every process (this one at once) that `key` is paused for `ms`. */
  async announce(key: string, ms: number): Promise<void> {
    this.#note(key, ms);
    await this.#redis.publish(this.#channel, `${ms}\n${key}`);
  }

  close(): void {
    this.#closed = true;
    this.#live = false;
    this.#subscriber?.disconnect();
  }

  /** True while pause announcements reach this process. */
  async #listen(): Promise<boolean> {
    if (this.#closed) return false;
    this.#listening ??= this.#subscribe().catch((error: unknown) => {
      this.#listening = undefined;
      this.#logger().warn({ err: loggableError(error) }, "listening for model pauses failed");
    });
    await this.#listening;
    return this.#live;
  }

  async #subscribe(): Promise<void> {
    const subscriber = subscriberOf(this.#redis);
    this.#subscriber = subscriber;
    subscriber.on("error", (error) =>
      this.#logger().warn({ err: loggableError(error) }, "model pause subscriber error"),
    );
    subscriber.on("message", (_channel: string, message: string) => {
      const cut = message.indexOf("\n");
      const ms = Number(message.slice(0, cut));
      if (cut > 0 && Number.isFinite(ms)) this.#note(message.slice(cut + 1), ms);
    });
    // Announcements may have been missed while the connection was down: read pauses again.
    subscriber.on("close", () => {
      this.#live = false;
      this.#until.clear();
    });
    subscriber.on("ready", () => {
      if (this.#closed || this.#subscriber !== subscriber) return;
      this.#until.clear();
      this.#live = true;
    });
    await subscriber.connect();
    await subscriber.subscribe(this.#channel);
    if (!this.#closed) this.#live = true;
  }

  #note(key: string, ms: number): void {
    if (!this.#live) return;
    this.#until.set(key, Math.max(this.#until.get(key) ?? 0, Date.now() + ms));
  }
}
