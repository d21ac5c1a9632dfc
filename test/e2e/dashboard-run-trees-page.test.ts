// Run trees on the page (SPEC §12.1 "Run trees", §14), in real headless Chromium: a parent
// links to its children, a child to its parent, and the runs list shows one tree alone (from a
// run's "tree" link, or typed in the filters).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  AgentRuntime,
  createDashboard,
  memoryBackend,
  PermissionManager,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { silent } from "../integration/fixtures.js";
import { useChromium } from "../support/chromium.js";

const chromium = useChromium();

function agents() {
  const researcher = new Agent({
    provider: new ScriptedProvider([textResponse("notes")], { loop: true }),
    config: { name: "researcher" },
    logger: silent,
  });
  const lead = new Agent({
    provider: new ScriptedProvider(
      [
        toolCallResponse([
          { name: "research", input: { input: "otters" } },
          { name: "research", input: { input: "beavers" } },
        ]),
        textResponse("done"),
      ],
      { loop: true },
    ),
    config: { name: "lead" },
    tools: [researcher.asTool({ name: "research", description: "Research" })],
    logger: silent,
  });
  return [lead, researcher];
}

describe("the page's run trees", () => {
  it("links a parent and its children both ways and lists one tree by its root", async () => {
    const runtime = new AgentRuntime({
      agents: agents(),
      backend: memoryBackend(),
      logger: silent,
    });
    await runtime.start();
    chromium.closers.push(() => runtime.close({ timeoutMs: 5000 }));
    const tree = await runtime.submit("lead", "go");
    await tree.result();
    const other = await runtime.submit("researcher", "alone");
    await other.result();
    const server = await createDashboard({
      runtime,
      readOpen: true,
      tokens: { ops: "run-trees-page-token-01" },
    }).listen({ port: 0 });
    chromium.closers.push(() => server.close());
    const [first, second] = [`${tree.runId}.call_1`, `${tree.runId}.call_2`];

    const context = await chromium.browser.newContext();
    chromium.closers.push(() => context.close());
    const page = await context.newPage();
    await page.goto(`${server.url}#run/${encodeURIComponent(tree.runId)}`);
    const children = page.locator("#run-summary .tree-children a");
    await expect.poll(() => children.allTextContents()).toEqual([first, second]);
    expect(await page.locator("#run-summary .tree-parent").count()).toBe(0);

    // A child names its parent and the call that started it; its parent link opens the parent.
    await children.nth(1).click();
    await expect.poll(() => page.locator("#run-title").textContent()).toBe(`Run ${second}`);
    const parent = page.locator("#run-summary .tree-parent");
    await expect.poll(() => parent.textContent()).toBe(`${tree.runId} · call call_2`);
    expect(await page.locator("#run-summary .tree-children").count()).toBe(0);

    // Its tree link lists the root and both children, not the run outside the tree.
    await page.locator("#run-summary a.tree-link").click();
    const rows = page.locator("#runs-body tr");
    await expect.poll(() => rows.count()).toBe(3);
    const shown = await Promise.all([0, 1, 2].map((at) => rows.nth(at).getAttribute("data-run")));
    expect(shown.sort()).toEqual([tree.runId, first, second].sort());
    expect(await page.locator('#filters [name="rootRunId"]').inputValue()).toBe(tree.runId);
    // A child's row links to its tree too.
    expect(await page.locator(`#runs-body tr[data-run="${first}"] a.tree-link`).count()).toBe(1);
    // A child's short id names its call, not only its root's first characters.
    const ids = page.locator("#runs-body td.run-id > a:first-child");
    expect((await ids.allTextContents()).sort()).toEqual(
      [
        tree.runId.slice(0, 8),
        `${tree.runId.slice(0, 8)}.call_1`,
        `${tree.runId.slice(0, 8)}.call_2`,
      ].sort(),
    );

    // Cleared, the filter lists every run again.
    await page.locator('#filters [name="rootRunId"]').fill("");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => rows.count()).toBe(4);

    // Typed in by hand, the filter shows the tree again.
    await page.locator('#filters [name="rootRunId"]').fill(tree.runId);
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => rows.count()).toBe(3);

    // The tree link of a parent leads to the same list.
    await page.locator('#filters [name="rootRunId"]').fill("");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => rows.count()).toBe(4);
    await page.goto(`${server.url}#run/${encodeURIComponent(tree.runId)}`);
    await expect.poll(() => children.count()).toBe(2);
    await page.locator("#run-summary a.tree-link").click();
    await expect.poll(() => rows.count()).toBe(3);
  });

  it("fits a tree's child ids, call ids and all, on a phone-wide runs view", async () => {
    const researcher = new Agent({
      provider: new ScriptedProvider([textResponse("notes")], { loop: true }),
      config: { name: "researcher" },
      logger: silent,
    });
    const lead = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([
          { name: "research", input: { input: "trams" }, id: "research_the_trams_of_lisbon" },
        ]),
        textResponse("done"),
      ]),
      config: { name: "lead" },
      tools: [researcher.asTool({ name: "research", description: "Research" })],
      logger: silent,
    });
    const runtime = new AgentRuntime({
      agents: [lead, researcher],
      backend: memoryBackend(),
      logger: silent,
    });
    await runtime.start();
    chromium.closers.push(() => runtime.close({ timeoutMs: 5000 }));
    const tree = await runtime.submit("lead", "go");
    await tree.result();
    const server = await createDashboard({
      runtime,
      readOpen: true,
      tokens: { ops: "run-trees-page-token-01" },
    }).listen({ port: 0 });
    chromium.closers.push(() => server.close());
    const context = await chromium.browser.newContext({ viewport: { width: 375, height: 740 } });
    chromium.closers.push(() => context.close());
    const page = await context.newPage();
    await page.goto(`${server.url}#runs`);
    const child = page.locator(
      `#runs-body tr[data-run="${tree.runId}.research_the_trams_of_lisbon"]`,
    );
    await expect.poll(() => child.count()).toBe(1);
    expect(await child.locator("td.run-id > a").first().textContent()).toBe(
      `${tree.runId.slice(0, 8)}.research_the_trams_of_lisbon`,
    );
    // No column hides past the screen's edge.
    const box = page.locator(".table-box");
    expect(await box.evaluate((each) => each.scrollWidth - each.clientWidth)).toBeLessThanOrEqual(
      0,
    );
  });

  it("links a parked child's inbox card to its tree", async () => {
    const deleteFile = tool({
      name: "delete_file",
      description: "Deletes a file.",
      input: z.object({ path: z.string() }),
      handler: async ({ path }) => `deleted ${path}`,
    });
    const cleaner = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "delete_file", input: { path: "a.log" }, id: "k1" }]),
        textResponse("cleaned"),
      ]),
      config: { name: "cleaner" },
      tools: [deleteFile],
      permissions: new PermissionManager({ rules: [{ tool: "delete_file", decision: "ask" }] }),
      logger: silent,
    });
    const lead = new Agent({
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "clean", input: { input: "tmp" } }]),
        textResponse("done"),
      ]),
      config: { name: "lead" },
      tools: [cleaner.asTool({ name: "clean", description: "Cleans" })],
      logger: silent,
    });
    const runtime = new AgentRuntime({
      agents: [lead, cleaner],
      backend: memoryBackend(),
      logger: silent,
    });
    await runtime.start();
    chromium.closers.push(() => runtime.close({ timeoutMs: 5000 }));
    const server = await createDashboard({
      runtime,
      readOpen: true,
      tokens: { ops: "run-trees-page-token-02" },
    }).listen({ port: 0 });
    chromium.closers.push(() => server.close());
    const context = await chromium.browser.newContext();
    chromium.closers.push(() => context.close());
    const page = await context.newPage();
    await page.goto(`${server.url}#inbox`);

    // The child parks while the page is open: its card (from the live stream) names the tree.
    const handle = await runtime.submit("lead", "go");
    const card = page.locator("#inbox-list li");
    await expect.poll(() => card.count()).toBe(1);
    const link = card.locator("a.tree-link");
    await expect.poll(() => link.textContent()).toBe(`tree ${handle.runId.slice(0, 8)}`);
    await link.click();
    const rows = page.locator("#runs-body tr");
    await expect.poll(() => rows.count()).toBe(2);

    // Read from /api/approvals too (a page opened after the child parked).
    await page.reload();
    await page.goto(`${server.url}#inbox`);
    await expect.poll(() => page.locator("#inbox-list li a.tree-link").count()).toBe(1);
  });
});
