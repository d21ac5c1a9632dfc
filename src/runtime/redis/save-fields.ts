// SAVE_RUN's first argument (redis-scripts.ts): a save's numbers and flags in one string.

/** What SAVE_RUN's first argument carries, in its order. */
export interface SaveFields {
  token: number;
  status: string;
  /** The lease's time to live, extended by the save. */
  ttlMs: number;
  /** A finished run's retention; "" while it is not finished. */
  retentionMs: number | "";
  /** The event list's length bound. */
  maxEvents: number;
  /** The messages stored already; "" to write the conversation anew. */
  storedMessages: number | "";
  /** "1" to give the lease up with the save, "" to extend it. */
  release: "1" | "";
  /** The new messages the save appends. */
  count: number;
  /**
   * `indexFields(summary)`: of them the run id, agent, session id and error code go as
   * arguments of their own (strings of any content stay out of JSON), the rest here.
   */
  index: readonly string[];
}

/**
 * SAVE_RUN's small fields as one argument, a JSON array of strings (the script decodes it):
 * each a command argument of its own cost the worker about 190 bytes of ioredis's encoding,
 * 65 arguments a run.
 */
export function saveFields(fields: SaveFields): string {
  const { index } = fields;
  const packed = [
    String(fields.token),
    fields.status,
    String(fields.ttlMs),
    String(fields.retentionMs),
    String(fields.maxEvents),
    String(fields.storedMessages),
    fields.release,
    String(fields.count),
  ];
  // The counts and times between the run's names (first three) and its error code (last).
  for (let at = 3; at < index.length - 1; at++) packed.push(index[at] as string);
  return JSON.stringify(packed);
}
