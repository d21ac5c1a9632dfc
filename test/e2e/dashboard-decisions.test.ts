// Deciding safely and reading runs (SPEC §12.1), in a real headless chromium: a failed decision
// keeps its card and says why, bulk approval, decide buttons on a waiting run's timeline, a
// cancel that asks first, sign-out, a foreign Host refused, the text streamed before the page
// opened, and failures that look like failures.
import { chromium, type Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  AgentRuntime,
  createDashboard,
  type DashboardServer,
  memoryBackend,
  type Provider,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { approvalAgent, gate, makeAgent, silent } from "../integration/fixtures.js";
import { CHROMIUM_PATH, useChromium } from "../support/chromium.js";

const TOKEN = "decisions-test-token-0123456789";
const SHOTS = "test-results/dashboard";

const session = useChromium();
const { closers } = session;

async function serve(
  agents: Agent[] = [approvalAgent().agent],
): Promise<{ runtime: AgentRuntime; server: DashboardServer }> {
  const runtime = new AgentRuntime({ agents, backend: memoryBackend(), logger: silent });
  await runtime.start();
  closers.push(() => runtime.close({ timeoutMs: 5000 }));
  const server = await createDashboard({ runtime, tokens: { ops: TOKEN } }).listen({ port: 0 });
  closers.push(() => server.close());
  return { runtime, server };
}

async function signIn(server: DashboardServer, page?: Page): Promise<Page> {
  let opened = page;
  if (opened === undefined) {
    const context = await session.browser.newContext();
    closers.push(() => context.close());
    opened = await context.newPage();
    await opened.goto(server.url);
  }
  await opened.getByLabel("Dashboard token").fill(TOKEN);
  await opened.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => opened.locator("#live").textContent()).toBe("live");
  return opened;
}

describe("deciding in the page", () => {
  it("keeps a card whose decision failed (503, network error, 401) and says why", async () => {
    const { runtime, server } = await serve();
    const handle = await runtime.submit("ops", "kept.log");
    await handle.result();
    const page = await signIn(server);
    const card = page.locator("#inbox-list li").first();
    await expect.poll(() => page.locator("#inbox-list li").count()).toBe(1);
    const approve = "**/api/runs/*/calls/*/approve";

    await page.route(approve, (route) =>
      route.fulfill({
        status: 503,
        contentType: "application/json",
        body: JSON.stringify({
          error: { code: "store_lost", message: "The run store is not answering." },
        }),
      }),
    );
    await card.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(() => card.locator(".card-error").textContent())
      .toBe("Not decided: The run store is not answering. (503 store_lost)");
    expect(await page.locator("#inbox-list li").count()).toBe(1);
    expect(await page.locator("#inbox-count").textContent()).toBe("1");

    await page.unroute(approve);
    await page.route(approve, (route) => route.abort("connectionrefused"));
    await card.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(() => card.locator(".card-error").textContent())
      .toContain("Not decided: the dashboard did not answer");
    expect(await page.locator("#inbox-list li").count()).toBe(1);
    expect((await runtime.get(handle.runId)).status).toBe("awaiting_approval");

    await page.unroute(approve);
    await page.route(approve, (route) =>
      route.fulfill({
        status: 401,
        contentType: "application/json",
        body: JSON.stringify({ error: { code: "unauthorized", message: "Writes need a token." } }),
      }),
    );
    await card.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => page.locator("#login").isVisible()).toBe(true);
    await page.unroute(approve);
    await signIn(server, page);
    await expect.poll(() => page.locator("#inbox-list li").count()).toBe(1);

    // Now the decision goes through: the card leaves, and "Just decided" follows the run.
    await page.locator("#inbox-list li").first().getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => page.locator("#inbox-list li").count()).toBe(0);
    await expect
      .poll(() => page.locator("#decided .decided-status").textContent())
      .toBe("completed");
    expect((await handle.result()).status).toBe("completed");
  });

  it("approves the selected calls together, and only those", async () => {
    const { runtime, server } = await serve();
    const handles = await runtime.submitMany("ops", ["one.log", "two.log", "three.log"]);
    for (const handle of handles) await handle.result();
    const page = await signIn(server);
    const cards = page.locator("#inbox-list li");
    await expect.poll(() => cards.count()).toBe(3);
    const keyOf = async (index: number) => String(await cards.nth(index).getAttribute("data-key"));
    const left = await keyOf(1);
    await cards.nth(0).locator("input.pick").check();
    await page.keyboard.press("Escape");
    await cards.nth(2).locator("input.pick").check();
    expect(await page.locator("#bulk-approve").textContent()).toBe("Approve selected (2)");
    await page.locator("#bulk-reason").fill("both checked");
    const chosen = await Promise.all(
      [0, 2].map(
        async (index) => (await cards.nth(index).getAttribute("data-key"))?.split("\u0000")[0],
      ),
    );
    await page.locator("#bulk-approve").click();
    await expect.poll(() => cards.count()).toBe(1);
    for (const runId of chosen) {
      const detail = await runtime.get(String(runId));
      expect(detail.decisions).toEqual([
        expect.objectContaining({ decision: "allow", by: "ops", reason: "both checked" }),
      ]);
      await expect.poll(async () => (await runtime.get(String(runId))).status).toBe("completed");
    }
    expect(await cards.first().getAttribute("data-key")).toBe(left);
    expect(await page.locator("#bulk-approve").textContent()).toBe("Approve selected (0)");
  });

  it("decides from a waiting run's timeline, and cancels another only when confirmed", async () => {
    const { runtime, server } = await serve();
    const waiting = await runtime.submit("ops", "from-timeline.log");
    const other = await runtime.submit("ops", "to-cancel.log");
    await Promise.all([waiting.result(), other.result()]);
    const page = await signIn(server);
    await page.goto(`${server.url}#run/${waiting.runId}`);
    const timeline = page.locator("#timeline");
    const ask = timeline.locator("li", { hasText: "Waiting for a person: delete_file" });
    await ask.getByLabel("Reason for delete_file").fill("seen in the timeline");
    await ask.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => timeline.textContent()).toContain("Run completed");
    expect((await runtime.get(waiting.runId)).decisions).toEqual([
      expect.objectContaining({ by: "ops", reason: "seen in the timeline" }),
    ]);

    await page.goto(`${server.url}#run/${other.runId}`);
    await expect.poll(() => page.locator("#cancel").isVisible()).toBe(true);
    await page.locator("#cancel").click();
    expect(await page.locator("#cancel-confirm").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Keep it running" }).click();
    expect(await page.locator("#cancel-confirm").isHidden()).toBe(true);
    expect((await runtime.get(other.runId)).status).toBe("awaiting_approval");
    await page.locator("#cancel").click();
    await page.getByRole("button", { name: "Yes, cancel the run" }).click();
    await expect.poll(async () => (await runtime.get(other.runId)).status).toBe("cancelled");
    await expect.poll(() => timeline.textContent()).toContain("Run cancelled");
    expect(await timeline.locator("li.k-failed").count()).toBe(1);
    // The record keeps who cancelled: the signed-in token's name, and the page shows it.
    expect((await runtime.get(other.runId)).cancelledBy).toBe("ops");
    const cancelledBy = page.locator("#run-summary div", { hasText: "Cancelled by" });
    await expect.poll(() => cancelledBy.locator("span").nth(1).textContent()).toBe("ops");
  });

  it("signs out: the token and the session are gone, and the page asks for a token again", async () => {
    const { server } = await serve();
    const page = await signIn(server);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect.poll(() => page.locator("#login").isVisible()).toBe(true);
    expect(await page.evaluate('sessionStorage.getItem("harnessx-token")')).toBeNull();
    const cookies = await page.context().cookies();
    expect(cookies.filter((cookie) => cookie.name === "hx_session")).toEqual([]);
    await page.reload();
    await expect.poll(() => page.locator("#login").isVisible()).toBe(true);
    expect(await page.evaluate(async () => (await fetch("api/runs")).status)).toBe(401);
  });
});

describe("reading runs in the page", () => {
  it("shows a run's request, a failure's message and the decided line as text, never as HTML", async () => {
    const { runtime, server } = await serve();
    const markup = '<img src=x onerror="window.pwned=1">.log';
    const handle = await runtime.submit("ops", markup);
    await handle.result();
    const page = await signIn(server);
    const card = page.locator("#inbox-list li").first();
    await expect.poll(() => card.locator(".context").textContent()).toContain(markup);
    const approve = "**/api/runs/*/calls/*/approve";
    await page.route(approve, (route) =>
      route.fulfill({
        status: 503,
        contentType: "application/json",
        body: JSON.stringify({ error: { code: "store_lost", message: markup } }),
      }),
    );
    await card.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => card.locator(".card-error").textContent()).toContain(markup);
    await page.unroute(approve);
    await card.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(() => page.locator("#decided .decided-status").textContent())
      .toBe("completed");
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.evaluate("window.pwned")).toBeUndefined();
  });

  it("refuses the page and its API under a foreign host name (DNS rebinding)", async () => {
    const { server } = await serve();
    const port = new URL(server.url).port;
    const rebound = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--host-resolver-rules=MAP attacker.example 127.0.0.1",
      ],
    });
    closers.push(() => rebound.close());
    const page = await rebound.newPage();
    const answer = await page.goto(`http://attacker.example:${port}/`);
    expect(answer?.status()).toBe(421);
    expect(await page.textContent("body")).toContain("host_not_allowed");
    expect(await page.evaluate(async () => (await fetch("/api/approvals")).status)).toBe(421);
    const local = await page.goto(`http://localhost:${port}/`);
    expect(local?.status()).toBe(200);
  });

  it("shows the text streamed before the page opened, from the first delta", async () => {
    const streaming = gate();
    const model: Provider = {
      name: "chunks",
      async complete() {
        return textResponse("chunk 1 chunk 2 chunk 3 chunk 4 chunk 5 chunk 6 ");
      },
      async *stream() {
        for (let index = 1; index <= 5; index += 1) {
          yield { type: "text_delta", text: `chunk ${index} ` };
        }
        await streaming.wait();
        yield { type: "text_delta", text: "chunk 6 " };
        yield {
          type: "response",
          response: textResponse("chunk 1 chunk 2 chunk 3 chunk 4 chunk 5 chunk 6 "),
        };
      },
    };
    const { runtime, server } = await serve([makeAgent("talker", { provider: model })]);
    const handle = await runtime.submit("talker", "Talk.");
    await streaming.entered;
    // The runtime may join consecutive deltas into one event: what counts is their text.
    const streamed = async () =>
      (await runtime.events(handle.runId)).events
        .map((event) => (event.type === "text_delta" ? event.text : ""))
        .join("");
    await expect.poll(streamed).toBe("chunk 1 chunk 2 chunk 3 chunk 4 chunk 5 ");
    const page = await signIn(server);
    await page.goto(`${server.url}#run/${handle.runId}`);
    const answering = page.locator("#timeline li", { hasText: "Model is answering" });
    await expect
      .poll(() => answering.locator("pre").textContent())
      .toBe("chunk 1 chunk 2 chunk 3 chunk 4 chunk 5 ");
    streaming.open();
    await expect.poll(() => page.locator("#timeline").textContent()).toContain("Run completed");
  });

  it("shows a running tool call's time, a failed run as failed, and flags a tool error", async () => {
    const held = gate();
    const slow = tool({
      name: "slow_lookup",
      description: "Looks slowly.",
      input: z.object({ query: z.string() }),
      handler: async () => {
        await held.wait();
        return "found";
      },
    });
    const broken = tool({
      name: "broken_lookup",
      description: "Always fails.",
      input: z.object({ query: z.string() }),
      handler: async () => {
        throw new Error("the index is gone");
      },
    });
    const agents = [
      makeAgent("slow", {
        provider: new ScriptedProvider([
          toolCallResponse([{ name: "slow_lookup", input: { query: "q" } }]),
          textResponse("done"),
        ]),
        tools: [slow],
      }),
      makeAgent("brittle", {
        provider: new ScriptedProvider([
          toolCallResponse([{ name: "broken_lookup", input: { query: "q" } }]),
          textResponse("could not look it up"),
        ]),
        tools: [broken],
      }),
      makeAgent("doomed", {
        provider: new ScriptedProvider([
          async () => {
            throw new Error("the model is gone");
          },
        ]),
      }),
    ];
    const { runtime, server } = await serve(agents);
    const running = await runtime.submit("slow", "Look it up.");
    const flagged = await runtime.submit("brittle", "Look it up.");
    const failed = await runtime.submit("doomed", "Try.");
    await held.entered;
    expect((await flagged.result()).status).toBe("completed");
    expect((await failed.result()).status).toBe("failed");
    const page = await signIn(server);

    await page.goto(`${server.url}#run/${running.runId}`);
    const runningItem = page.locator("#timeline li.k-running");
    await expect
      .poll(() => runningItem.locator("strong").textContent())
      .toBe("Running: slow_lookup");
    expect(await runningItem.locator(".elapsed").textContent()).toMatch(/^running for \d/);
    held.open();
    await expect.poll(() => page.locator("#timeline").textContent()).toContain("Run completed");
    expect(await page.locator("#timeline li.k-running").count()).toBe(0);

    await page.goto(`${server.url}#run/${flagged.runId}`);
    await expect
      .poll(() => page.locator("#run-summary").textContent())
      .toContain("1 tool call(s) failed");
    await expect
      .poll(() => page.locator("#timeline li.k-flagged").textContent())
      .toContain("1 tool call(s) failed on the way");
    // A run without an error shows no error field (nor a stray "null").
    expect(await page.locator("#run-summary").textContent()).not.toMatch(/Error|null/);
    expect(await page.locator("#timeline li.k-flagged").textContent()).toMatch(
      /Run completedafter 2 iteration\(s\) in \d/,
    );

    await page.goto(`${server.url}#run/${failed.runId}`);
    await expect
      .poll(() => page.locator("#timeline li.k-failed").textContent())
      .toContain("Run failed");
    expect(await page.locator("#timeline li.k-result").count()).toBe(0);

    await page.goto(`${server.url}#runs`);
    const failedRow = page.locator(`#runs-body tr[data-run="${failed.runId}"]`);
    await expect.poll(() => failedRow.getAttribute("class")).toBe("row-failed");
    expect(await failedRow.locator("td.status").textContent()).toMatch(/^failed · \w+/);
    // Dates, not only times of day; durations in words.
    expect(await failedRow.locator("td.created").textContent()).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
    );
    expect(await failedRow.locator("td.took").textContent()).toMatch(/^\d+(\.\d)? m?s$/);
    await page.screenshot({ path: `${SHOTS}/runs.png`, fullPage: true });
  });
});
