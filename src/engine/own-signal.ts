/**
 * A signal of the run's own that follows the caller's, whatever the caller's lives for: what
 * hangs on it (the deadlines' links to the signals they handed out) goes with the run.
 * (`runStream` makes one per run already; a durable step has its own.)
 */
export const withOwnSignal = <O extends { signal?: AbortSignal }>(options: O): O =>
  options.signal === undefined
    ? options
    : { ...options, signal: AbortSignal.any([options.signal]) };
