import type { RedisClient } from "./redis-connection.js";

/**
 * Which models are paused (a provider said `rate_limited`), known in this process without a
 * Redis read before every model call. A pause is announced on a channel to every process; a
 * process with workers hears the channel on its control subscriber (`listening`, `heard`), and
 * reads a model's pause from Redis once, when it first asks about it after it started
 * listening (or listened again after a lost connection). While it does not listen, every
 * question reads Redis. A pause that slips through costs one call that the provider refuses,
 * which pauses the model again.
 */
export class PauseWatch {
  readonly #redis: RedisClient;
  readonly #channel: string;
  /** When each model's pause ends (ms since the epoch), for the models read since listening. */
  readonly #until = new Map<string, number>();
  #live = false;

  constructor(redis: RedisClient, channel: string) {
    this.#redis = redis;
    this.#channel = channel;
  }

  /** How long `key` stays paused (0: not paused); `read` asks Redis. */
  async remainingMs(key: string, read: () => Promise<number>): Promise<number> {
    if (!this.#live) return read();
    let until = this.#until.get(key);
    if (until === undefined) {
      const ms = await read();
      // A pause heard while the read was under way is kept if it ends later.
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

  /**
   * Whether announcements reach this process from now on: each change forgets what it knew,
   * since announcements may have been missed meanwhile.
   */
  listening(live: boolean): void {
    this.#live = live;
    this.#until.clear();
  }

  /** An announcement heard on the channel. */
  heard(message: string): void {
    const cut = message.indexOf("\n");
    const ms = Number(message.slice(0, cut));
    if (cut > 0 && Number.isFinite(ms)) this.#note(message.slice(cut + 1), ms);
  }

  #note(key: string, ms: number): void {
    if (!this.#live) return;
    this.#until.set(key, Math.max(this.#until.get(key) ?? 0, Date.now() + ms));
  }
}
