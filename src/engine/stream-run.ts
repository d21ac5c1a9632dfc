import type { RunResult } from "../core/values.js";
import { EventChannel } from "./event-channel.js";
import type { RunEvent } from "./run-events.js";

/**
 * A run as a stream of its events, ending with `{ type: "result" }`. `start` runs it, emitting
 * to the stream, under a signal that follows `outer` and is aborted when the consumer stops
 * reading (which cancels the run).
 */
export function streamRun(
  start: (emit: (event: RunEvent) => void, signal: AbortSignal) => Promise<RunResult>,
  outer: AbortSignal | undefined,
): AsyncIterable<RunEvent> {
  const channel = new EventChannel<RunEvent>();
  const stop = new AbortController();
  const signal = outer ? AbortSignal.any([outer, stop.signal]) : stop.signal;
  return {
    async *[Symbol.asyncIterator]() {
      const finished = start((event) => channel.push(event), signal).then(
        (result) => channel.push({ type: "result", result }),
        (error: unknown) => {
          channel.close();
          throw error;
        },
      );
      finished.finally(() => channel.close()).catch(() => {});
      try {
        yield* channel;
        await finished;
      } finally {
        // A consumer that stops reading cancels the run.
        stop.abort();
        await finished.catch(() => {});
      }
    },
  };
}
