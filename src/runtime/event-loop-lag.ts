import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Logger } from "pino";

/** The share of `lockDurationMs` a blocked event loop may reach before it is reported. */
const WARN_SHARE = 0.5;

/**
 * Warns (pino `warn`) when this process's event loop was blocked for half of `lockDurationMs`
 * or more: a job whose lock is not renewed in time is taken over by another worker while its
 * handler still runs here, and the call's outcome is then reported to the model as unknown.
 * Returns the function that stops watching.
 */
export function watchEventLoopLag(lockDurationMs: number, logger: Logger): () => void {
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  const limitMs = lockDurationMs * WARN_SHARE;
  const timer = setInterval(
    () => {
      const lagMs = histogram.max / 1e6;
      histogram.reset();
      if (lagMs < limitMs) return;
      logger.warn(
        { lagMs: Math.round(lagMs), lockDurationMs },
        "the event loop was blocked for a large part of lockDurationMs: jobs may be taken over by another worker while their handlers run here (their outcome is then unknown); move CPU-bound work off the event loop or raise lockDurationMs",
      );
    },
    Math.min(1000, Math.max(50, Math.floor(lockDurationMs / 4))),
  );
  timer.unref();
  return () => {
    clearInterval(timer);
    histogram.disable();
  };
}
