import { type ExtensionStateStore, stateKeyOf } from "../extensions/state-store.js";
import type { RecorderSink } from "../features/recorder/recorder-sink.js";
import { decodeStateValue, encodeStateValue } from "../store/extension-state-codec.js";
import { decodeRecording, RecordingWriter } from "../store/recording-codec.js";
import type { RedisClient } from "./redis-connection.js";
import type { RedisKeys } from "./redis-keys.js";

/**
 * Extensions' saved state in Redis: one string key per agent, extension, key and session, under
 * the backend's prefix (so in its hash slot on a cluster), written and read with single-key
 * commands. Like run records, it is never expired.
 */
export function redisExtensionStateStore(redis: RedisClient, keys: RedisKeys): ExtensionStateStore {
  return {
    async get(address) {
      const key = keys.extensionState(stateKeyOf(address));
      const json = await redis.get(key);
      return json === null ? undefined : decodeStateValue(json, key);
    },
    async set(address, value) {
      await redis.set(keys.extensionState(stateKeyOf(address)), encodeStateValue(value));
    },
  };
}

/**
 * Flight recordings in Redis: a list per run beside its event log, appended one entry a
 * command (RPUSH), kept as long as the run's record and deleted when it is pruned.
 */
export function redisRecorderSink(
  redis: RedisClient,
  keys: RedisKeys,
): RecorderSink & { forget(runId: string): void } {
  const writer = new RecordingWriter();
  return {
    async append(runId, entry) {
      const encoded = writer.encode(runId, entry);
      const length = await redis.rpush(keys.recording(runId), encoded.json);
      encoded.stored(length - 1);
    },
    async entries(runId) {
      return decodeRecording(runId, await redis.lrange(keys.recording(runId), 0, -1));
    },
    forget: (runId) => writer.forget(runId),
  };
}
