// The agent of bench/live.mjs: a model that streams `deltas` text deltas `gapMs` apart, each
// delta's text the time it was yielded ("<µs since the epoch>|"), then answers.
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { Agent } from "../../dist/index.js";
import { textResponse } from "../../dist/testing.js";

export const LIVE_AGENT = "live";
const SEPARATOR = "|";

/** Wall-clock µs, comparable across processes of one machine. */
export const stamp = () => Math.round((performance.timeOrigin + performance.now()) * 1000);

/** The stamps in a delta's text (several when the runtime joined consecutive deltas). */
export const stampsOf = (text) =>
  text
    .split(SEPARATOR)
    .filter((part) => part !== "")
    .map(Number);

/** `before` (optional) is awaited before the first delta: a run that streams when told to. */
export function liveAgent({ deltas, gapMs, before }) {
  const model = {
    name: "bench-live",
    async complete() {
      return textResponse("done");
    },
    async *stream(_request, options) {
      await before?.();
      for (let index = 0; index < deltas; index += 1) {
        if (index > 0) await sleep(gapMs, undefined, { signal: options?.signal });
        yield { type: "text_delta", text: `${stamp()}${SEPARATOR}` };
      }
      yield { type: "response", response: textResponse("done") };
    },
  };
  return new Agent({
    provider: model,
    config: { name: LIVE_AGENT },
    logger: pino({ level: "silent" }),
  });
}
