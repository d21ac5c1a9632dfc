import type { Request, Response } from "express";

/** True when the client asks for a live stream (`Accept: text/event-stream`). */
export const wantsEventStream = (request: Request): boolean =>
  (request.get("accept") ?? "").includes("text/event-stream");

/** An open Server-Sent Events response: `send` writes one event; `closed` aborts on hang-up. */
export interface EventStream {
  send(event: string, data: unknown, id?: number): void;
  end(): void;
  readonly closed: AbortSignal;
}

/** Starts an SSE response with a comment every `heartbeatMs` so proxies keep it open. */
export function openEventStream(
  request: Request,
  response: Response,
  heartbeatMs: number,
  track: (stream: EventStream) => () => void,
): EventStream {
  const controller = new AbortController();
  response.status(200).set({
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
  });
  response.flushHeaders();
  const heartbeat = setInterval(() => response.write(": keep-alive\n\n"), heartbeatMs);
  heartbeat.unref();
  const stream: EventStream = {
    send(event, data, id) {
      if (controller.signal.aborted) return;
      const idLine = id === undefined ? "" : `id: ${id}\n`;
      response.write(`${idLine}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      if (!controller.signal.aborted) controller.abort();
      response.end();
    },
    closed: controller.signal,
  };
  const untrack = track(stream);
  const hangUp = (): void => {
    clearInterval(heartbeat);
    untrack();
    if (!controller.signal.aborted) controller.abort();
  };
  request.on("close", hangUp);
  controller.signal.addEventListener("abort", () => clearInterval(heartbeat), { once: true });
  return stream;
}
