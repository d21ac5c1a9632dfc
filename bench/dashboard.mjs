// Issue 10: the dashboard over Redis, through its HTTP API and its page. Prints one JSON document.
//
//   npm run --silent bench:dashboard       # builds first
//   node bench/dashboard.mjs --runs=100000 --samples=500 --subscribers=100 --deltas=50 --approvals=20
//
// 1. `GET /api/runs?limit=50` with `--runs` runs stored next to the same with 1,000 runs stored
//    (two prefixes of one Redis, two dashboards, requests alternated so drift falls on both).
//    `GET /api/overview?window=7d` alternated with it on each dashboard (issue 31: it reads the
//    week's 168 counter buckets, whatever the runs stored; target within 2x of the page).
// 2. SSE fan-out: `--subscribers` clients on `GET /api/runs/:runId/events` (text/event-stream) of
//    one running run whose model streams `--deltas` deltas, each carrying the time it was yielded;
//    the latency of every delta at every subscriber.
// 3. Approve click → completed: `--approvals` parked runs approved one by one in the page's inbox
//    (headless Debian chromium via playwright-core); the time from the click to the card gone and
//    the inbox's "Just decided" line showing the run `completed` (its live status stream),
//    measured inside the page; beside it, interleaved, the same decision by POST from the bench
//    and by runtime.approve(), until the bench's own /api/stream client reads it (approve-click.mjs).
// 4. Bursts (issue 31): `--bursts` runs (default 1000 and 5000) submitted at once while the page
//    shows the runs view (runs that complete) and again the inbox (runs that park for a person);
//    every frame's length in the page (requestAnimationFrame to requestAnimationFrame), the
//    longest and the p99, and the most table rows and inbox cards the page held.
// Workers run in this process (as `harnessx demo --dashboard` does); `--runs=10000` for a quick check.
// Redis: REDIS_URL when set, else a private redis-server on a free port (no persistence).
import { cpus, loadavg } from "node:os";
import { Redis } from "ioredis";
import { pino } from "pino";
import { chromium } from "playwright-core";
import { AgentRuntime, createDashboard, redisBackend } from "../dist/index.js";
import { deletePrefix, uniquePrefix } from "./lib/redis.mjs";
import { option, round, summarize } from "./lib/stats.mjs";
import { benchAgents, PARKED_AGENT, PROMPT, RUN_AGENT } from "./runtime/agents.mjs";
import { approveThroughPage } from "./runtime/approve-click.mjs";
import { LIVE_AGENT, liveAgent, stamp, stampsOf } from "./runtime/live-agent.mjs";
import { redisServer, redisVersion } from "./runtime/redis-server.mjs";
import { storeWith } from "./runtime/stored-runs.mjs";

const SMALL = 1000;
const LARGE = option("runs", 100_000);
const SAMPLES = option("samples", 500);
const SUBSCRIBERS = option("subscribers", 100);
const DELTAS = option("deltas", 50);
const GAP_MS = option("gap-ms", 20);
const APPROVALS = option("approvals", 20);
const BURSTS = (process.argv.find((arg) => arg.startsWith("--bursts="))?.slice(9) ?? "1000,5000")
  .split(",")
  .map(Number);
const ONLY = process.argv.find((arg) => arg.startsWith("--only="))?.slice(7);
const LIMIT = 50;
const WARM_UP = 20;

const TOKEN = "bench-dashboard-token-0123456789";
const TOKENS = { bench: TOKEN };
const AUTH = { authorization: `Bearer ${TOKEN}` };
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// The launch arguments of test/support/chromium.ts.
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const log = (line) => process.stderr.write(`[bench:dashboard] ${line}\n`);
const silent = pino({ level: "silent" });

async function main() {
  const loadAtStart = loadavg()[0];
  const redis = await redisServer();
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  const prefixes = [];
  try {
    const wants = (part) => ONLY === undefined || ONLY.split(",").includes(part);
    const runsPage = wants("list") ? await pageLatency(redis.url, prefixes) : undefined;
    const fanOut = wants("sse") ? await sseFanOut(redis.url, prefixes) : undefined;
    const approve = wants("approve")
      ? await approveThroughPage({
          url: redis.url,
          prefixes,
          approvals: APPROVALS,
          chromium: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true },
          token: TOKEN,
          log,
        })
      : undefined;
    const bursts = wants("burst") ? await burstsInPage(redis.url, prefixes) : undefined;
    const output = {
      benchmark: "dashboard",
      node: process.version,
      redis: await redisVersion(client),
      chromium: approve?.browserVersion ?? bursts?.browserVersion,
      cpus: cpus().length,
      loadAverage1m: { atStart: round(loadAtStart), atEnd: round(loadavg()[0]) },
      runsPage: runsPage,
      sseFanOut: fanOut,
      approveClickToCompleted: approve?.figures,
      bursts: bursts?.figures,
    };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  } finally {
    for (const prefix of prefixes) await deletePrefix(client, prefix);
    client.disconnect();
    await redis.stop();
  }
}

/** Part 1: `GET /api/runs?limit=50` against 1,000 and `LARGE` runs stored. */
async function pageLatency(url, prefixes) {
  const stores = [];
  const servers = [];
  try {
    for (const runs of [SMALL, LARGE]) {
      const store = await storeWith(url, runs, { log, middleCursor: false, part: "dash-list" });
      stores.push(store);
      prefixes.push(store.prefix);
      servers.push(
        await createDashboard({ runtime: store.runtime, tokens: TOKENS }).listen({
          port: 0,
          host: "127.0.0.1",
        }),
      );
    }
    const timings = servers.map(() => []);
    const overviewTimings = servers.map(() => []);
    for (let sample = 0; sample < SAMPLES + WARM_UP; sample += 1) {
      for (const [at, server] of servers.entries()) {
        const began = performance.now();
        const response = await fetch(`${server.url}api/runs?limit=${LIMIT}`, { headers: AUTH });
        const page = await response.json();
        const elapsed = performance.now() - began;
        if (!response.ok || page.runs.length !== LIMIT) {
          throw new Error(
            `GET /api/runs: ${response.status} ${JSON.stringify(page).slice(0, 200)}`,
          );
        }
        if (sample >= WARM_UP) timings[at].push(elapsed);
        // The overview of the week, next to the page, alternated on the same server.
        const overviewBegan = performance.now();
        const overviewResponse = await fetch(`${server.url}api/overview?window=7d`, {
          headers: AUTH,
        });
        const overview = await overviewResponse.json();
        const overviewElapsed = performance.now() - overviewBegan;
        if (!overviewResponse.ok || overview.counts === undefined) {
          throw new Error(`GET /api/overview: ${overviewResponse.status}`);
        }
        if (sample >= WARM_UP) overviewTimings[at].push(overviewElapsed);
      }
    }
    const [small, large] = timings.map(summarize);
    const [overviewSmall, overviewLarge] = overviewTimings.map(summarize);
    log(
      `overview: p50 ${overviewSmall.p50} → ${overviewLarge.p50} ms, p99 ${overviewSmall.p99} → ${overviewLarge.p99} ms`,
    );
    log(`runs page: p50 ${small.p50} → ${large.p50} ms, p99 ${small.p99} → ${large.p99} ms`);
    return {
      request: `GET /api/runs?limit=${LIMIT} (keep-alive fetch, JSON parsed)`,
      [`runs${SMALL}`]: small,
      [`runs${LARGE}`]: large,
      p50Ratio: round(large.p50 / small.p50),
      p99Ratio: round(large.p99 / small.p99),
      overview: {
        request: "GET /api/overview?window=7d, alternated with the page on the same server",
        [`runs${SMALL}`]: overviewSmall,
        [`runs${LARGE}`]: overviewLarge,
        p50VsRunsPage: round(overviewLarge.p50 / large.p50),
        p99VsRunsPage: round(overviewLarge.p99 / large.p99),
      },
      stored: Object.fromEntries(
        stores.map((store) => [
          `runs${store.runs}`,
          { writeSeconds: store.writeSeconds, runsPerSecond: store.runsPerSecond },
        ]),
      ),
    };
  } finally {
    for (const server of servers) await server.close();
    for (const store of stores) await store.runtime.close({ timeoutMs: 1000 });
  }
}

/** Part 2: `SUBSCRIBERS` SSE clients on one running run; every delta's latency at each. */
async function sseFanOut(url, prefixes) {
  const prefix = uniquePrefix("dash-sse");
  prefixes.push(prefix);
  const streaming = gate();
  const entered = gate();
  const runtime = new AgentRuntime({
    agents: [
      liveAgent({
        deltas: DELTAS,
        gapMs: GAP_MS,
        before: async () => {
          entered.open();
          await streaming.promise;
        },
      }),
    ],
    backend: redisBackend({ url, prefix }),
    logger: silent,
  });
  await runtime.start();
  const server = await createDashboard({ runtime, tokens: TOKENS }).listen({
    port: 0,
    host: "127.0.0.1",
  });
  try {
    const handle = await runtime.submit(LIVE_AGENT, "Stream.");
    await entered.promise; // the run is running, its model about to yield
    const subscribers = await Promise.all(
      Array.from({ length: SUBSCRIBERS }, () => subscribe(server.url, handle.runId)),
    );
    const status = (await runtime.get(handle.runId)).status;
    log(`${SUBSCRIBERS} subscribers on run (${status}); streaming ${DELTAS} deltas`);
    streaming.open();
    const received = await Promise.all(subscribers.map((each) => each.done));
    const latencies = [];
    let events = 0;
    for (const each of received) {
      if (each.stamps.length !== DELTAS) {
        throw new Error(`a subscriber read ${each.stamps.length} of ${DELTAS} deltas`);
      }
      events += each.events;
      latencies.push(...each.latencies);
    }
    const result = await handle.result();
    if (result.status !== "completed") throw new Error(`the streaming run ended ${result.status}`);
    const figures = summarize(latencies);
    log(`fan-out: delta p50 ${figures.p50} ms, p99 ${figures.p99} ms`);
    return {
      subscribers: SUBSCRIBERS,
      deltasPerRun: DELTAS,
      gapMs: GAP_MS,
      // The model was already streaming: the stored status is `running` from the moment a
      // worker took the run's lease.
      storedStatusWhenSubscribed: status,
      deltaLatencyMs: figures,
      deltasPerEvent: round((DELTAS * SUBSCRIBERS) / events),
    };
  } finally {
    await server.close();
    await runtime.close({ timeoutMs: 5000 });
  }
}

/**
 * One SSE client: resolves once its response headers are in (the server follows the run by
 * then); `done` resolves at the stream's `end` event with the stamps and latencies it read.
 */
async function subscribe(base, runId) {
  const response = await fetch(`${base}api/runs/${encodeURIComponent(runId)}/events`, {
    headers: { ...AUTH, accept: "text/event-stream" },
  });
  if (!response.ok) throw new Error(`SSE: HTTP ${response.status}`);
  const done = (async () => {
    const stamps = [];
    const latencies = [];
    let events = 0;
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      const received = stamp();
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end !== -1) {
        const message = parseSse(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        if (message.event === "end") return { stamps, latencies, events };
        if (message.event !== "run_event") continue;
        const event = JSON.parse(message.data);
        if (event.type !== "text_delta") continue;
        events += 1;
        for (const sent of stampsOf(event.text)) {
          stamps.push(sent);
          latencies.push((received - sent) / 1000);
        }
      }
    }
    return { stamps, latencies, events };
  })();
  return { done };
}

/** `event:` and `data:` of one SSE message (comments and ids ignored). */
function parseSse(block) {
  const message = { event: "message", data: "" };
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) message.event = line.slice(7);
    else if (line.startsWith("data: ")) message.data += line.slice(6);
  }
  return message;
}

/** Part 4: bursts of runs while the page shows the runs view, then the inbox. */
async function burstsInPage(url, prefixes) {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
    headless: true,
  });
  const figures = [];
  try {
    for (const view of ["runs", "inbox"]) {
      for (const count of BURSTS) {
        figures.push(await burstInPage(url, prefixes, browser, view, count));
      }
    }
  } finally {
    await browser.close();
  }
  return { browserVersion: browser.version(), figures };
}

async function burstInPage(url, prefixes, browser, view, count) {
  const prefix = uniquePrefix(`dash-burst-${view}`);
  prefixes.push(prefix);
  const runtime = new AgentRuntime({
    agents: benchAgents(),
    backend: redisBackend({ url, prefix }),
    logger: silent,
  });
  await runtime.start();
  const server = await createDashboard({ runtime, tokens: TOKENS }).listen({
    port: 0,
    host: "127.0.0.1",
  });
  const context = await browser.newContext();
  try {
    if (view === "runs") {
      // A full page of runs on screen before the burst: the view holds rows, not an empty table.
      const seeded = await runtime.submitMany(RUN_AGENT, Array(60).fill(PROMPT));
      await Promise.all(seeded.map((handle) => handle.result()));
    }
    const page = await context.newPage();
    await page.goto(server.url);
    await page.getByLabel("Dashboard token").fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForFunction(() => document.getElementById("live")?.textContent === "live");
    await page.goto(`${server.url}#${view}`);
    await page.waitForFunction((id) => !document.getElementById(id).hidden, view);
    await page.evaluate(startFrames);
    const agent = view === "runs" ? RUN_AGENT : PARKED_AGENT;
    const began = performance.now();
    const handles = [];
    for (let at = 0; at < count; at += 500) {
      const size = Math.min(500, count - at);
      handles.push(...(await runtime.submitMany(agent, Array(size).fill(PROMPT))));
    }
    const results = await Promise.all(handles.map((handle) => handle.result()));
    const settledMs = performance.now() - began;
    const expected = view === "runs" ? "completed" : "awaiting_approval";
    if (results.some((result) => result.status !== expected))
      throw new Error("a burst run ended wrong");
    // The page has seen it all when its counter says so.
    await page.waitForFunction(
      ([shown, total]) =>
        shown === "runs"
          ? document.getElementById("new-runs")?.textContent?.startsWith(`${total} new run`)
          : document.getElementById("inbox-count")?.textContent === String(total),
      [view, count],
      { timeout: 120_000 },
    );
    const frames = await page.evaluate(stopFrames);
    const summary = summarize(frames.lengths);
    log(
      `burst ${count} (${view} view): longest frame ${round(frames.longest)} ms (script ${round(frames.longestScriptMs)} ms), p99 ${summary.p99} ms, rows ${frames.rows}, cards ${frames.cards}`,
    );
    return {
      view,
      runs: count,
      runsEnded: expected,
      burstSeconds: round(settledMs / 1000),
      frames: frames.lengths.length,
      longestFrameMs: round(frames.longest),
      longestScriptInAFrameMs: round(frames.longestScriptMs),
      p99FrameMs: summary.p99,
      p50FrameMs: summary.p50,
      framesOver100Ms: frames.lengths.filter((length) => length > 100).length,
      mostTableRows: frames.rows,
      mostInboxCards: frames.cards,
    };
  } finally {
    await context.close();
    await server.close();
    await runtime.close({ timeoutMs: 5000 });
  }
}

/** In the page: records every frame's length and the most rows and cards drawn. */
function startFrames() {
  const record = {
    lengths: [],
    rows: 0,
    cards: 0,
    running: true,
    last: performance.now(),
    longestScriptMs: 0,
  };
  window.__frames = record;
  // Long animation frames (Chromium): how much of a long frame was the page's own script, as
  // against the renderer waiting for a core on a busy machine.
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const script = entry.scripts.reduce((sum, each) => sum + each.duration, 0);
      record.longestScriptMs = Math.max(record.longestScriptMs, script);
    }
  });
  observer.observe({ type: "long-animation-frame", buffered: false });
  record.observer = observer;
  const tick = (now) => {
    record.lengths.push(now - record.last);
    record.last = now;
    record.rows = Math.max(record.rows, document.querySelectorAll("#runs-body tr").length);
    record.cards = Math.max(record.cards, document.querySelectorAll("#inbox-list li").length);
    if (record.running) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

function stopFrames() {
  const record = window.__frames;
  record.running = false;
  record.observer.disconnect();
  return {
    longestScriptMs: record.longestScriptMs,
    lengths: record.lengths,
    longest: Math.max(...record.lengths),
    rows: record.rows,
    cards: record.cards,
  };
}

function gate() {
  let open = () => {};
  const promise = new Promise((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

await main();
