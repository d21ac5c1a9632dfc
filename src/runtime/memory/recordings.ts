import type { RecorderSink } from "../../features/recorder/recorder-sink.js";
import { decodeRecording, RecordingWriter } from "../../store/recording-codec.js";

/**
 * Flight recordings in this process's memory, stored as the Redis backend stores them (JSON,
 * each request's messages from where they differ from the last) and read back the same way.
 * Kept as long as the run's record; `drop` deletes one when the run is pruned.
 */
export function memoryRecorderStore(): RecorderSink & { drop(runId: string): void } {
  const writer = new RecordingWriter();
  const recordings = new Map<string, string[]>();
  return {
    async append(runId, entry) {
      const encoded = writer.encode(runId, entry);
      let stored = recordings.get(runId);
      if (stored === undefined) {
        stored = [];
        recordings.set(runId, stored);
      }
      encoded.stored(stored.push(encoded.json) - 1);
    },
    async entries(runId) {
      return decodeRecording(runId, recordings.get(runId) ?? []);
    },
    drop(runId) {
      recordings.delete(runId);
      writer.forget(runId);
    },
  };
}
