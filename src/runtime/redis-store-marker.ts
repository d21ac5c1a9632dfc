import type { Logger } from "pino";
import { z } from "zod";
import { loggableError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { randomUUID } from "../core/node-crypto.js";
import { BackendError } from "../store/errors.js";
import { mastersOf, type RedisClient } from "./redis-connection.js";

/**
 * The store marker: a key under the prefix, written once by the first runtime that starts on
 * an empty store, that names this store. Runs cannot outlive it: a run missing while the marker
 * this runtime saw is gone (or replaced) means Redis lost its data, not that the run is unknown.
 */
export class StoreMarker {
  readonly #redis: RedisClient;
  readonly #key: string;
  #seen: string | undefined;

  constructor(redis: RedisClient, key: string) {
    this.#redis = redis;
    this.#key = key;
  }

  /** Writes the marker unless one exists, and remembers the one in force. */
  async open(): Promise<void> {
    await this.#redis.set(this.#key, randomUUID(), "NX");
    this.#seen = (await this.#redis.get(this.#key)) ?? undefined;
  }

  /**
   * Throws `BackendError` (`store_lost`) when the marker this runtime saw is gone: called when
   * something that must exist (a run) was not found.
   */
  async assertKept(where: string): Promise<void> {
    if (this.#seen === undefined) return;
    const now = await this.#redis.get(this.#key);
    if (now === this.#seen) return;
    throw new BackendError(
      `${where} lost its data (the store marker "${this.#key}" this runtime saw at start is ${
        now === null ? "gone" : "replaced"
      }): Redis restarted empty or was flushed, and its runs are lost, not unknown. Use persistence (appendonly yes) and restart the runtime.`,
      { code: "store_lost" },
    );
  }
}

const ConfigReply = lazySchema(() => z.array(z.string()));

/**
 * Warns when a server persists nothing (no RDB snapshots, no append-only file): a restart would
 * lose every run. A server that refuses CONFIG (managed Redis) is not judged.
 */
export async function warnUnlessPersistent(
  client: RedisClient,
  logger: Logger,
  where: string,
): Promise<void> {
  for (const server of mastersOf(client)) {
    let save: string | undefined;
    let appendonly: string | undefined;
    try {
      save = ConfigReply.parse(await server.config("GET", "save"))[1];
      appendonly = ConfigReply.parse(await server.config("GET", "appendonly"))[1];
    } catch (error) {
      logger.debug(
        { err: loggableError(error) },
        "cannot read Redis's persistence settings (CONFIG GET)",
      );
      continue;
    }
    if (save === "" && appendonly === "no") {
      const node = `${server.options.host ?? "?"}:${server.options.port ?? "?"}`;
      logger.warn(
        { redis: where, node, save, appendonly },
        "Redis persists nothing (save '' and appendonly no): a restart loses every run. Set appendonly yes.",
      );
    }
  }
}
