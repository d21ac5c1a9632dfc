// Edit-and-approve, respond and a quorum's given/needed in the page (SPEC §7.1, §12.1 "Deciding
// safely"), in a real headless Chromium: from an inbox card and from a waiting run's timeline.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  AgentRuntime,
  createDashboard,
  type DashboardServer,
  memoryBackend,
} from "../../src/index.js";
import { wireAgent } from "../integration/decisions-contract.js";
import { silent } from "../integration/fixtures.js";
import { useChromium } from "../support/chromium.js";

const TOKEN = "decision-forms-token-0123456789";

const session = useChromium();
const { closers } = session;

async function serve(approvals = 1) {
  const bank = wireAgent(approvals);
  const runtime = new AgentRuntime({
    agents: [bank.agent],
    backend: memoryBackend(),
    logger: silent,
  });
  await runtime.start();
  closers.push(() => runtime.close({ timeoutMs: 5000 }));
  const server = await createDashboard({ runtime, tokens: { ops: TOKEN } }).listen({ port: 0 });
  closers.push(() => server.close());
  const handle = await runtime.submit("bank", "pay acme");
  expect((await handle.result()).status).toBe("awaiting_approval");
  return { bank, runtime, server, handle };
}

async function signIn(server: DashboardServer): Promise<Page> {
  const context = await session.browser.newContext();
  closers.push(() => context.close());
  const page = await context.newPage();
  await page.goto(server.url);
  await page.getByLabel("Dashboard token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => page.locator("#live").textContent()).toBe("live");
  return page;
}

describe("the decision forms in the page", () => {
  it("edits and approves from an inbox card; a refused edit keeps the card and says why", async () => {
    const { bank, runtime, server, handle } = await serve();
    const page = await signIn(server);
    const card = page.locator("#inbox-list li").first();
    await expect.poll(() => page.locator("#inbox-list li").count()).toBe(1);
    await card.getByText("Edit and approve").click();
    const editor = card.getByLabel("Edited input of wire");
    expect(JSON.parse(await editor.inputValue())).toEqual({ to: "acme", amount: 900 });

    await editor.fill("[1, 2]");
    await card.getByRole("button", { name: "Approve edited" }).click();
    expect(await card.getByRole("alert").filter({ hasText: "JSON object" }).count()).toBe(1);

    await editor.fill('{ "to": "acme", "amount": 5000 }');
    await card.getByRole("button", { name: "Approve edited" }).click();
    await expect
      .poll(() => card.locator(".card-error").textContent())
      .toContain("approval_refused");
    expect(await page.locator("#inbox-list li").count()).toBe(1);
    expect((await runtime.get(handle.runId)).decisions).toEqual([]);

    await editor.fill('{ "to": "acme", "amount": 450 }');
    await card.getByRole("button", { name: "Approve edited" }).click();
    await expect.poll(() => page.locator("#inbox-list li").count()).toBe(0);
    expect((await handle.result()).status).toBe("completed");
    expect(bank.wired).toEqual([{ to: "acme", amount: 450 }]);
    expect((await runtime.get(handle.runId)).decisions).toMatchObject([
      { by: "ops", editedInput: { to: "acme", amount: 450 } },
    ]);
  });

  it("responds from a waiting run's timeline; the handler never runs", async () => {
    const { bank, server, handle } = await serve();
    const page = await signIn(server);
    await page.goto(`${server.url}#run/${handle.runId}`);
    const ask = page.locator("#timeline li", { hasText: "Waiting for a person: wire" });
    await ask.getByText("Respond instead").click();
    await ask.getByLabel("Response to wire").fill("payee not verified");
    await ask.getByRole("checkbox").check();
    await ask.getByRole("button", { name: "Send response" }).click();
    await expect.poll(() => page.locator("#timeline").textContent()).toContain("Run completed");
    const done = await handle.result();
    expect(done.output).toBe("Done: [checked] payee not verified");
    expect(bank.ended).toEqual([
      { toolCallId: "call_1", content: "[checked] payee not verified", isError: true },
    ]);
    expect(bank.wired).toEqual([]);
  });

  it("shows a quorum's given/needed; one approval keeps the card, the same token again is refused", async () => {
    const { bank, runtime, server, handle } = await serve(2);
    const page = await signIn(server);
    const card = page.locator("#inbox-list li").first();
    await expect
      .poll(() => card.locator(".quorum").textContent())
      .toBe("Approvals 0/2 (distinct people)");
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await expect.poll(() => card.locator(".quorum").textContent()).toBe("Approvals 1/2: you");
    expect(await page.locator("#inbox-list li").count()).toBe(1);
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await expect
      .poll(() => card.locator(".card-error").textContent())
      .toContain("approver_repeated");

    await page.goto(`${server.url}#run/${handle.runId}`);
    const ask = page.locator("#timeline li", { hasText: "Waiting for a person: wire" });
    await expect.poll(() => ask.locator(".quorum").textContent()).toBe("Approvals 1/2: ops");
    await runtime.approve(handle.runId, "call_1", { by: "second-person" });
    expect((await handle.result()).status).toBe("completed");
    expect(bank.wired).toHaveLength(1);
  });
});
