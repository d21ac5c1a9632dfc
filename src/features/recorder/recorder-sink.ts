import type { RecorderEntry } from "./entry.js";

/**
 * Where a flight recorder keeps its entries, per run, in the order appended. The default keeps
 * them in memory; a durable runtime provides one that keeps them with the run's event log, so
 * any process can read a run's recording.
 */
export interface RecorderSink {
  append(runId: string, entry: RecorderEntry): Promise<void>;
  /** The run's entries in order; empty for a run never recorded. */
  entries(runId: string): Promise<RecorderEntry[]>;
}

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
