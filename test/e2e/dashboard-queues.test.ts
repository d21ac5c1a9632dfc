// The page's Queues link in a real headless chromium: bull-board opens with or without the
// trailing slash, and a reload of a queue's own page shows it again (its <base href> is allowed
// on the queue view alone; the rest of the dashboard keeps base-uri 'none').
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  AgentRuntime,
  createDashboard,
  type DashboardServer,
  redisBackend,
} from "../../src/index.js";
import { approvalAgent, silent } from "../integration/fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "../integration/redis.js";
import { launchChromium } from "../support/chromium.js";

const TOKEN = "queues-test-token-0123456789";

let browser: Browser;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  await requireRedis();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser.close();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function serveRedis(): Promise<{
  server: DashboardServer;
  prefix: string;
  runId: string;
}> {
  const prefix = uniquePrefix();
  closers.push(() => deletePrefix(prefix));
  const runtime = new AgentRuntime({
    agents: [approvalAgent().agent],
    backend: redisBackend({ url: redisUrl(), prefix }),
    logger: silent,
  });
  await runtime.start();
  closers.push(() => runtime.close({ timeoutMs: 5000 }));
  const handle = await runtime.submit("ops", "old.log");
  await handle.result();
  await runtime.approve(handle.runId, "call_1", { by: "ops" });
  expect((await handle.result()).status).toBe("completed");
  const server = await createDashboard({ runtime, tokens: { ops: TOKEN } }).listen({ port: 0 });
  closers.push(() => server.close());
  return { server, prefix, runId: handle.runId };
}

/** A signed-in page, and every answer of 400 or more it received. */
async function signedIn(server: DashboardServer): Promise<{ page: Page; failed: string[] }> {
  const context = await browser.newContext();
  closers.push(() => context.close());
  const page = await context.newPage();
  const failed: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  await page.goto(server.url);
  await page.getByLabel("Dashboard token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => page.locator("#nav-queues").isVisible()).toBe(true);
  return { page, failed };
}

describe("the queue view in the browser", () => {
  it("opens from the page's link, without and with the slash, and on reload of a queue page", async () => {
    const { server, prefix } = await serveRedis();
    const { page, failed } = await signedIn(server);
    const board = page.locator("#root");

    await page.locator("#nav-queues").click();
    expect(new URL(page.url()).pathname).toBe("/admin/queues");
    await expect.poll(() => board.textContent()).toContain(`harnessx ${prefix}: tool calls`);

    await page.goto(`${server.url}admin/queues/`);
    await expect.poll(() => board.textContent()).toContain(`harnessx ${prefix}: run steps`);

    // A queue's own page, then a reload of it.
    await page.getByText(`harnessx ${prefix}: run steps`).first().click();
    await expect.poll(() => new URL(page.url()).pathname).toContain("/admin/queues/queue/");
    const queuePage = page.url();
    await page.reload();
    expect(page.url()).toBe(queuePage);
    await expect.poll(() => board.textContent()).toContain(`harnessx ${prefix}: run steps`);
    await page.goto(queuePage);
    await expect.poll(() => board.textContent()).toContain(`harnessx ${prefix}: run steps`);
    expect(failed).toEqual([]);
  });

  it("links a job to its run's page", async () => {
    const { server, prefix, runId } = await serveRedis();
    const { page } = await signedIn(server);
    const queue = `${prefix} / harnessx-tools`;
    await page.goto(
      `${server.url}admin/queues/queue/${encodeURIComponent(queue)}?status=completed`,
    );
    const link = page.locator(`a[href="/#run/${runId}"]`).first();
    await expect.poll(() => link.count()).toBeGreaterThan(0);
    expect(await link.textContent()).toContain(`run ${runId.slice(0, 8)}`);
    // bull-board opens it in a new tab; in this one (signed in) it opens the run's timeline.
    await page.goto(new URL(String(await link.getAttribute("href")), server.url).toString());
    await expect.poll(() => page.locator("#run-title").textContent()).toBe(`Run ${runId}`);
  });

  it("keeps base-uri 'none' everywhere but the queue view", async () => {
    const { server } = await serveRedis();
    const csp = async (path: string) =>
      (await fetch(new URL(path, server.url))).headers.get("content-security-policy") ?? "";
    expect(await csp("")).toContain("base-uri 'none'");
    expect(await csp("api/runs")).toContain("base-uri 'none'");
    expect(await csp("admin/queuesx")).toContain("base-uri 'none'");
    expect(await csp("admin/queues")).toContain("base-uri 'self'");
    expect(await csp("admin/queues/queue/x")).toContain("base-uri 'self'");
  });
});
