// The page signed in with a scoped token (SPEC §7.1 "Who may decide"), in real headless
// Chromium: its inbox and its count hold only the calls the token may decide, including a run
// that parks while the page is open (the live stream); an admin token sees every call.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AgentRuntime,
  createDashboard,
  type DashboardServer,
  memoryBackend,
  tool,
} from "../../src/index.js";
import {
  approvalAgent,
  approvalPolicy,
  makeAgent,
  oneToolModel,
  silent,
} from "../integration/fixtures.js";
import { useChromium } from "../support/chromium.js";

const ADMIN = "scoped-page-admin-token-01";
const FILES = "scoped-page-files-token-01";
const chromium = useChromium();

function cleanerAgent() {
  const clean = tool({
    name: "delete_cache",
    description: "Deletes a cache.",
    input: z.object({ path: z.string() }),
    handler: async ({ path }) => `cleaned ${path}`,
  });
  return makeAgent("cleaner", {
    provider: oneToolModel("delete_cache", { field: "path" }),
    tools: [clean],
    permissions: approvalPolicy(),
  });
}

async function signIn(server: DashboardServer, token: string): Promise<Page> {
  const context = await chromium.browser.newContext();
  chromium.closers.push(() => context.close());
  const page = await context.newPage();
  await page.goto(server.url);
  await page.getByLabel("Dashboard token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  return page;
}

describe("the page with a scoped token", () => {
  it("lists and counts only the calls its token may decide, live ones too", async () => {
    const runtime = new AgentRuntime({
      agents: [approvalAgent().agent, cleanerAgent()],
      backend: memoryBackend(),
      logger: silent,
    });
    await runtime.start();
    chromium.closers.push(() => runtime.close({ timeoutMs: 5000 }));
    const parked = await Promise.all([
      runtime.submit("ops", "a.log"),
      runtime.submit("cleaner", "tmp"),
    ]);
    await Promise.all(parked.map((handle) => handle.result()));
    const server = await createDashboard({
      runtime,
      tokens: { admin: ADMIN, files: { token: FILES, tools: ["delete_file"] } },
    }).listen({ port: 0 });
    chromium.closers.push(() => server.close());

    const page = await signIn(server, FILES);
    const items = page.locator("#inbox-list li");
    await expect.poll(() => items.count()).toBe(1);
    expect(await items.first().textContent()).toContain("delete_file");
    expect(await page.locator("#inbox-count").textContent()).toBe("1");

    // Two more runs park while the page is open: only the one in scope joins the inbox.
    const live = await Promise.all([
      runtime.submit("cleaner", "cache2"),
      runtime.submit("ops", "b.log"),
    ]);
    await Promise.all(live.map((handle) => handle.result()));
    await expect.poll(() => items.count()).toBe(2);
    await expect.poll(() => page.locator("#inbox-count").textContent()).toBe("2");
    expect(await page.locator("#inbox-list").textContent()).not.toContain("delete_cache");

    const admin = await signIn(server, ADMIN);
    await expect.poll(() => admin.locator("#inbox-list li").count()).toBe(4);
  });
});
