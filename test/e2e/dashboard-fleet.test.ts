// The page holds a fleet (SPEC §12.1), in a real headless chromium: the runs view draws one
// bounded page and counts new runs instead of growing, a status change replaces only its row,
// hidden views draw nothing, the inbox shows a bounded page of cards, and a phone-wide screen
// scrolls no view sideways.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  AgentRuntime,
  createDashboard,
  type DashboardServer,
  memoryBackend,
} from "../../src/index.js";
import { ScriptedProvider, textResponse } from "../../src/testing.js";
import { approvalAgent, makeAgent, silent } from "../integration/fixtures.js";
import { useChromium } from "../support/chromium.js";

const TOKEN = "fleet-test-token-0123456789";
const SHOTS = "test-results/dashboard";

const session = useChromium();
const { closers } = session;

/** `quick`: answers at once, so a burst of its runs is a burst of status changes. */
const quickAgent = () =>
  makeAgent("quick", { provider: new ScriptedProvider([textResponse("ok")], { loop: true }) });

async function serve(): Promise<{ runtime: AgentRuntime; server: DashboardServer }> {
  const runtime = new AgentRuntime({
    agents: [approvalAgent().agent, quickAgent()],
    backend: memoryBackend(),
    logger: silent,
  });
  await runtime.start();
  closers.push(() => runtime.close({ timeoutMs: 5000 }));
  const server = await createDashboard({ runtime, tokens: { ops: TOKEN } }).listen({ port: 0 });
  closers.push(() => server.close());
  return { runtime, server };
}

async function signIn(
  server: DashboardServer,
  viewport = { width: 1280, height: 900 },
): Promise<Page> {
  const context = await session.browser.newContext({ viewport });
  closers.push(() => context.close());
  const page = await context.newPage();
  await page.goto(server.url);
  await page.getByLabel("Dashboard token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => page.locator("#live").textContent()).toBe("live");
  return page;
}

async function burst(runtime: AgentRuntime, count: number): Promise<void> {
  const handles = await runtime.submitMany(
    "quick",
    Array.from({ length: count }, (_, index) => `burst ${index}`),
  );
  for (const handle of handles) expect((await handle.result()).status).toBe("completed");
}

/** Counts mutations under each element id from now on (in the page's `mutations`). */
async function watchMutations(page: Page, ids: string[]): Promise<void> {
  await page.evaluate(`(() => {
    window.mutations = {};
    for (const name of ${JSON.stringify(ids)}) {
      window.mutations[name] = 0;
      new MutationObserver((records) => {
        window.mutations[name] += records.length;
      }).observe(document.getElementById(name), {
        childList: true,
        subtree: true,
        characterData: true,
        attributes: true,
      });
    }
  })()`);
}

const mutations = async (page: Page): Promise<Record<string, number>> =>
  (await page.evaluate("window.mutations")) as Record<string, number>;

describe("the page under a fleet", () => {
  it("draws one page of runs, counts new runs instead of growing, and replaces only a changed row", async () => {
    const { runtime, server } = await serve();
    await burst(runtime, 60);
    const parked = await runtime.submit("ops", "newest.log");
    expect((await parked.result()).status).toBe("awaiting_approval");
    const page = await signIn(server);
    await page.goto(`${server.url}#runs`);
    const rows = page.locator("#runs-body tr");
    await expect.poll(() => rows.count()).toBe(50);
    expect(await rows.first().getAttribute("data-run")).toBe(parked.runId);
    expect(await page.locator("#page-note").textContent()).toBe("Page 1 · 50 runs");
    // Every row on screen is marked: a row drawn again is a new element, without the mark.
    await page.evaluate(
      'for (const row of document.querySelectorAll("#runs-body tr")) row.classList.add("seen")',
    );

    await burst(runtime, 100);
    const banner = page.locator("#new-runs");
    await expect.poll(() => banner.textContent()).toBe("100 new runs: show");
    expect(await rows.count()).toBe(50);
    expect(await page.locator("#runs-body tr.seen").count()).toBe(50);

    await runtime.approve(parked.runId, "call_1", { by: "elsewhere" });
    const parkedRow = page.locator(`#runs-body tr[data-run="${parked.runId}"]`);
    await expect.poll(() => parkedRow.locator("td.status").textContent()).toBe("completed");
    expect(await parkedRow.getAttribute("class")).not.toContain("seen");
    expect(await page.locator("#runs-body tr.seen").count()).toBe(49);
    expect(await rows.count()).toBe(50);

    await banner.click();
    await expect.poll(() => banner.isHidden()).toBe(true);
    expect(await rows.count()).toBe(50);
    expect(await page.locator("#runs-body tr.seen").count()).toBe(0);
    expect(await rows.first().textContent()).toContain("quick");
    // Older pages replace the page on screen; they never add to it.
    await page.locator("#older").click();
    await expect.poll(() => page.locator("#page-note").textContent()).toBe("Page 2 · 50 runs");
    expect(await rows.count()).toBe(50);
    await page.locator("#older").click();
    await expect.poll(() => page.locator("#page-note").textContent()).toBe("Page 3 · 50 runs");
    await page.locator("#older").click();
    await expect.poll(() => page.locator("#page-note").textContent()).toBe("Page 4 · 11 runs");
    expect(await page.locator("#older").isHidden()).toBe(true);
    await page.locator("#newer").click();
    await expect.poll(() => page.locator("#page-note").textContent()).toBe("Page 3 · 50 runs");
  });

  it("draws nothing into hidden views while runs change", async () => {
    const { runtime, server } = await serve();
    const page = await signIn(server);
    await page.goto(`${server.url}#runs`);
    await expect.poll(() => page.locator("#page-note").textContent()).toBe("No runs.");
    await page.goto(`${server.url}#inbox`);
    await watchMutations(page, ["runs", "run", "inbox-list"]);
    await burst(runtime, 80);
    const parked = await runtime.submit("ops", "while-away.log");
    await parked.result();
    await expect.poll(() => page.locator("#inbox-list li").count()).toBe(1);
    const seen = await mutations(page);
    expect(seen.runs).toBe(0);
    expect(seen.run).toBe(0);
    expect(seen["inbox-list"]).toBeGreaterThan(0);
    // Shown again, the runs view reads its page.
    await page.goto(`${server.url}#runs`);
    await expect.poll(() => page.locator("#runs-body tr").count()).toBe(50);
    expect(await page.locator("#runs-body tr").first().getAttribute("data-run")).toBe(parked.runId);
  });

  it("shows a bounded page of waiting calls and how many more wait", async () => {
    const { runtime, server } = await serve();
    const handles = await runtime.submitMany(
      "ops",
      Array.from({ length: 55 }, (_, index) => `file-${index}.log`),
    );
    for (const handle of handles) await handle.result();
    const page = await signIn(server);
    const cards = page.locator("#inbox-list li");
    await expect.poll(() => cards.count()).toBe(50);
    expect(await page.locator("#inbox-count").textContent()).toBe("55");
    expect(await page.locator("#inbox-more").textContent()).toBe(
      "5 more waiting: decide these first, or filter by agent or tool.",
    );
    await cards.first().getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => page.locator("#inbox-count").textContent()).toBe("54");
    expect(await cards.count()).toBe(50);
    expect(await page.locator("#inbox-more").textContent()).toContain("4 more waiting");
    // A card shows the run's request and what the model said before it asked.
    await expect
      .poll(() => cards.first().locator(".context").textContent())
      .toMatch(/^Request.*file-\d+\.log.*Model said/);
  });

  it("takes out only the card that leaves, leaving the other cards where they are", async () => {
    const { runtime, server } = await serve();
    const handles = await runtime.submitMany("ops", ["a.log", "b.log", "c.log"]);
    for (const handle of handles) await handle.result();
    const page = await signIn(server);
    const cards = page.locator("#inbox-list > li");
    await expect.poll(() => cards.count()).toBe(3);
    const first = await cards.first().getAttribute("data-key");
    await page.evaluate(`(() => {
      window.moves = [];
      new MutationObserver((records) => {
        for (const record of records) {
          for (const node of record.addedNodes) window.moves.push("added " + node.dataset.key);
          for (const node of record.removedNodes) window.moves.push("removed " + node.dataset.key);
        }
      }).observe(document.getElementById("inbox-list"), { childList: true });
    })()`);
    await cards.first().getByRole("button", { name: "Approve", exact: true }).click();
    await expect.poll(() => cards.count()).toBe(2);
    // Drawing the inbox again after the run's changes moves nothing more.
    await expect
      .poll(() => page.locator("#decided .decided-status").textContent())
      .toBe("completed");
    expect(await page.evaluate("window.moves")).toEqual([`removed ${first}`]);
  });

  it("lays every view out on a phone-wide screen without sideways scrolling", async () => {
    const { runtime, server } = await serve();
    await burst(runtime, 5);
    const parked = await runtime.submit("ops", "a-rather-long-file-name-for-a-narrow-screen.log");
    await parked.result();
    const page = await signIn(server, { width: 375, height: 740 });
    const overflow = async () =>
      Number(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"));
    await expect.poll(() => page.locator("#inbox-list li").count()).toBe(1);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${SHOTS}/phone-inbox.png`, fullPage: true });
    await page.goto(`${server.url}#runs`);
    await expect.poll(() => page.locator("#runs-body tr").count()).toBe(6);
    expect(await overflow()).toBeLessThanOrEqual(0);
    // The table fits too: no column hides past the screen's edge.
    const table = page.locator(".table-box");
    expect(await table.evaluate((box) => box.scrollWidth - box.clientWidth)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${SHOTS}/phone-runs.png`, fullPage: true });
    await page.goto(`${server.url}#run/${parked.runId}`);
    await expect
      .poll(() => page.locator("#timeline").textContent())
      .toContain("Waiting for a person");
    expect(await overflow()).toBeLessThanOrEqual(0);
  });
});
