import type { RecorderEntry, RecorderSink } from "./entry.js";

// Declared with the entries it holds (entry.ts), so that entry.ts needs nothing of this file.
export type { RecorderSink };

export interface MemoryRecorderSinkOptions {
  /** Runs kept; the run recorded least recently is forgotten first. @defaultValue 1000 */
  maxRuns?: number;
}

/** Entries in this process's memory, for direct runs. */
export function memoryRecorderSink(options: MemoryRecorderSinkOptions = {}): RecorderSink {
  const maxRuns = options.maxRuns ?? 1000;
  const runs = new Map<string, RecorderEntry[]>();
  return {
    async append(runId, entry) {
      const entries = runs.get(runId) ?? [];
      entries.push(entry);
      // Re-inserted: the map's order is least recently recorded first.
      runs.delete(runId);
      runs.set(runId, entries);
      if (runs.size > maxRuns) runs.delete(runs.keys().next().value as string);
    },
    async entries(runId) {
      return structuredClone(runs.get(runId) ?? []);
    },
  };
}
