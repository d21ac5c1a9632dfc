// The approve click's two baselines in bench:dashboard, measured beside the click in one run:
// the same decision sent by `POST …/approve` from this process (the dashboard's HTTP path,
// without a browser) and by `runtime.approve()` (no HTTP at all), each until the dashboard's
// live stream (`GET /api/stream`, which the page reads too) says the run is `completed`.

/**
 * One client of `GET /api/stream`: `completed(runId)` resolves with `performance.now()` at the
 * moment a `run` event saying that run is `completed` arrives (asked before it does).
 */
export async function streamWatcher(base, headers) {
  const stop = new AbortController();
  const response = await fetch(`${base}api/stream`, {
    headers: { ...headers, accept: "text/event-stream" },
    signal: stop.signal,
  });
  if (!response.ok) throw new Error(`GET /api/stream: HTTP ${response.status}`);
  const waiting = new Map(); // runId → resolve
  let ready;
  const isReady = new Promise((resolve) => {
    ready = resolve;
  });
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body) {
      const arrived = performance.now();
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.startsWith("event: ready")) ready();
        if (!block.startsWith("event: run\n")) continue;
        const run = JSON.parse(block.slice(block.indexOf("data: ") + 6));
        if (run.status !== "completed") continue;
        waiting.get(run.runId)?.(arrived);
        waiting.delete(run.runId);
      }
    }
  })().catch((error) => {
    if (!stop.signal.aborted) throw error;
  });
  await isReady;
  return {
    completed: (runId) => new Promise((resolve) => waiting.set(runId, resolve)),
    close: async () => {
      stop.abort();
      await reading;
    },
  };
}

/** Approves `toolCallId` of `runId` through the dashboard's API; throws unless it answers 200. */
export async function approveByPost(base, headers, runId, toolCallId) {
  const response = await fetch(
    `${base}api/runs/${encodeURIComponent(runId)}/calls/${encodeURIComponent(toolCallId)}/approve`,
    {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: "{}",
    },
  );
  if (response.status !== 200) throw new Error(`POST …/approve: HTTP ${response.status}`);
  await response.json();
}
