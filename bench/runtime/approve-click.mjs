// Part 3 of bench:dashboard: approve click → the page shows the run completed, measured beside
// two baselines in one run: the same decision sent by `POST …/approve` from the bench (the
// dashboard's HTTP path, without a browser) and by `runtime.approve()` (no HTTP at all), each
// until the dashboard's live stream (`GET /api/stream`, which the page reads too) says the run
// is `completed`. Interleaved round by round, so that drift falls on all three.
import { pino } from "pino";
import { chromium } from "playwright-core";
import { AgentRuntime, createDashboard, redisBackend } from "../../dist/index.js";
import { uniquePrefix } from "../lib/redis.mjs";
import { round, summarize } from "../lib/stats.mjs";
import { benchAgents, PARKED_AGENT, PROMPT, TOOL_CALL_ID } from "./agents.mjs";

const silent = pino({ level: "silent" });

/**
 * Parked runs approved one at a time, a third by a click in the page, a third by POST, a third
 * by runtime.approve(); returns the figures and Chromium's version.
 */
export async function approveThroughPage(options) {
  const { url, prefixes, approvals: APPROVALS, token: TOKEN, log } = options;
  const TOKENS = { bench: TOKEN };
  const AUTH = { authorization: `Bearer ${TOKEN}` };
  const prefix = uniquePrefix("dash-page");
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
  const browser = await chromium.launch(options.chromium);
  let watcher;
  try {
    // Each round decides three runs: one by a click in the page, one by POST from here, one by
    // runtime.approve(); the order turns each round, so that drift falls on all three.
    const handles = await Promise.all(
      Array.from({ length: 3 * APPROVALS }, () => runtime.submit(PARKED_AGENT, PROMPT)),
    );
    for (const handle of handles) {
      const parked = await handle.result();
      if (parked.status !== "awaiting_approval") throw new Error(`a run ${parked.status}`);
    }
    const page = await (await browser.newContext()).newPage();
    await page.goto(server.url);
    await page.getByLabel("Dashboard token").fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForFunction(
      (count) =>
        document.getElementById("live")?.textContent === "live" &&
        document.querySelectorAll("#inbox-list li").length === Math.min(count, 50),
      handles.length,
    );
    watcher = await streamWatcher(server.url, AUTH);
    const undecided = new Set(handles.map((handle) => handle.runId));
    const shown = [];
    const answered = [];
    const posted = [];
    const direct = [];
    const byClick = async () => {
      // The oldest card on screen not decided already (the inbox shows the 50 oldest waiting
      // calls; a card decided from here leaves at the page's next frame).
      const onScreen = await page.evaluate(() =>
        [...document.querySelectorAll("#inbox-list li")].map(
          (card) => card.dataset.key.split("\u0000")[0],
        ),
      );
      const runId = onScreen.find((each) => undecided.has(each));
      undecided.delete(runId);
      const clickedAt = Date.now();
      shown.push(await page.evaluate(clickAndWatch, runId));
      const completed = await runtime.get(runId);
      if (completed.status !== "completed") throw new Error(`a run ${completed.status}`);
      // The same run as `GET /api/runs/:id` reports it: its last update after the click.
      answered.push(completed.updatedAt - clickedAt);
    };
    const byStream = (decide, into) => async () => {
      const [runId] = undecided;
      undecided.delete(runId);
      const done = watcher.completed(runId);
      const began = performance.now();
      await decide(runId);
      into.push((await done) - began);
    };
    const paths = [
      byClick,
      byStream((runId) => approveByPost(server.url, AUTH, runId, TOOL_CALL_ID), posted),
      byStream((runId) => runtime.approve(runId, TOOL_CALL_ID, { by: "bench" }), direct),
    ];
    for (let round = 0; round < APPROVALS; round += 1) {
      for (let at = 0; at < paths.length; at += 1) await paths[(round + at) % paths.length]();
    }
    const figures = summarize(shown);
    const viaPost = summarize(posted);
    const viaRuntime = summarize(direct);
    log(
      `approve → completed: click (page) p50 ${figures.p50} ms, POST p50 ${viaPost.p50} ms, runtime.approve() p50 ${viaRuntime.p50} ms`,
    );
    return {
      browserVersion: browser.version(),
      figures: {
        runs: APPROVALS,
        clickToPageShowsCompletedMs: figures,
        clickToRunUpdatedAtMs: summarize(answered),
        postToStreamCompletedMs: viaPost,
        approveToStreamCompletedMs: viaRuntime,
        p50Ratios: {
          clickOverPost: round(figures.p50 / viaPost.p50),
          postOverApprove: round(viaPost.p50 / viaRuntime.p50),
        },
        measured:
          "clickToPageShowsCompletedMs: in the page, performance.now() from the Approve button's click() to its card gone from the inbox and the inbox's 'Just decided' line for the run (fed by GET /api/stream) reading `completed`; clickToRunUpdatedAtMs: the run's updatedAt (GET /api/runs/:id) minus Date.now() just before the click, ms resolution; postToStreamCompletedMs / approveToStreamCompletedMs: from this process, POST …/approve (no browser) or runtime.approve() (no HTTP) to this process's own GET /api/stream client reading the run `completed`, interleaved with the clicks round by round",
      },
    };
  } finally {
    await watcher?.close();
    await browser.close();
    await server.close();
    await runtime.close({ timeoutMs: 5000 });
  }
}

/**
 * In the page: clicks the run's Approve and resolves with the ms until its card is gone and the
 * inbox's "Just decided" line for it says completed.
 */
function clickAndWatch(runId) {
  const item = document.querySelector(`#inbox-list li[data-key^="${CSS.escape(runId)}"]`);
  if (!item) throw new Error(`no inbox item for ${runId}`);
  const done = () =>
    !item.isConnected &&
    [...document.querySelectorAll("#decided li")].some(
      (line) =>
        line.querySelector("a")?.getAttribute("href") === `#run/${encodeURIComponent(runId)}` &&
        line.querySelector(".decided-status")?.textContent === "completed",
    );
  return new Promise((resolve) => {
    const began = performance.now();
    const observer = new MutationObserver(() => {
      if (!done()) return;
      observer.disconnect();
      resolve(performance.now() - began);
    });
    observer.observe(document.getElementById("inbox"), {
      childList: true,
      subtree: true,
      characterData: true,
    });
    item.querySelector("button.approve").click();
  });
}

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
