// The dashboard page in a real headless chromium: sign in with a token, the runs table, a run's
// timeline, and the approvals inbox deciding calls and following runs parked elsewhere.
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AgentRuntime,
  createDashboard,
  type DashboardServer,
  memoryBackend,
  PermissionManager,
  redisBackend,
  tool,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";
import { approvalAgent, makeAgent, readerAgent, silent } from "../integration/fixtures.js";
import { deletePrefix, redisUrl, requireRedis, uniquePrefix } from "../integration/redis.js";
import { launchChromium } from "../support/chromium.js";

const TOKEN = "page-test-token-0123456789";
const SHOTS = "test-results/dashboard";

let browser: Browser;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser.close();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function started(
  runtime: AgentRuntime,
  options: { workers?: boolean } = {},
): Promise<AgentRuntime> {
  await runtime.start(options);
  closers.push(() => runtime.close({ timeoutMs: 5000 }));
  return runtime;
}

async function serve(runtime: AgentRuntime): Promise<DashboardServer> {
  const server = await createDashboard({ runtime, tokens: { "ops-lead": TOKEN } }).listen({
    port: 0,
  });
  closers.push(() => server.close());
  return server;
}

async function signIn(server: DashboardServer, token = TOKEN): Promise<Page> {
  const context = await browser.newContext();
  closers.push(() => context.close());
  const page = await context.newPage();
  await page.goto(server.url);
  await page.getByLabel("Dashboard token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  return page;
}

describe("the dashboard page", () => {
  it("refuses a wrong token and says so", async () => {
    const runtime = await started(
      new AgentRuntime({
        agents: [approvalAgent().agent],
        backend: memoryBackend(),
        logger: silent,
      }),
    );
    const page = await signIn(await serve(runtime), "not-the-token-at-all");
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not known");
    expect(await page.locator("#inbox").isHidden()).toBe(true);
  });

  it("approves from the inbox with a reason, by key, and the run completes live in its timeline", async () => {
    const runtime = await started(
      new AgentRuntime({
        agents: [approvalAgent().agent],
        backend: memoryBackend(),
        logger: silent,
      }),
    );
    // The inbox orders by when calls started waiting, then by run id: parked one after the
    // other (often within one millisecond), the older run's id sorts first as well.
    const first = await runtime.submit("ops", "old.log", { runId: "run-1-old" });
    await first.result();
    const second = await runtime.submit("ops", "new.log", { runId: "run-2-new" });
    await second.result();
    const server = await serve(runtime);
    const page = await signIn(server);

    const items = page.locator("#inbox-list li");
    await expect.poll(() => items.count()).toBe(2);
    expect(await page.locator("#who").textContent()).toBe("signed in as ops-lead");
    await page.screenshot({ path: `${SHOTS}/inbox.png`, fullPage: true });

    // The oldest waits first: approve it with a reason typed in its field, then the key "a".
    const oldest = items.first();
    expect(await oldest.locator("pre").textContent()).toContain('"path": "old.log"');
    await page.keyboard.press("r");
    await page.keyboard.type("checked the file");
    await page.keyboard.press("Escape");
    await page.keyboard.press("a");
    await expect.poll(() => items.count()).toBe(1);
    expect((await first.result()).status).toBe("completed");
    const approved = await runtime.get(first.runId);
    expect(approved.decisions).toEqual([
      expect.objectContaining({ decision: "allow", by: "ops-lead", reason: "checked the file" }),
    ]);

    // Deny the other with the button, then read the reason in its timeline.
    await items.first().getByPlaceholder("Reason (optional)").fill("not this one");
    await items.first().getByRole("button", { name: "Deny" }).click();
    await expect.poll(() => items.count()).toBe(0);
    await page.goto(`${server.url}#run/${second.runId}`);
    const timeline = page.locator("#timeline");
    await expect.poll(() => timeline.textContent()).toContain("Run completed");
    expect(await timeline.textContent()).toContain("Denied: delete_file");
    expect(await timeline.textContent()).toContain("not this one");
    expect(await timeline.textContent()).toContain("By ops-lead");

    await page.goto(`${server.url}#runs`);
    await expect.poll(() => page.locator("#runs-body tr").count()).toBe(2);
    expect(await page.locator("#runs-body").textContent()).toContain("completed");
  });

  it("follows a parked run's timeline live as it is approved elsewhere", async () => {
    const runtime = await started(
      new AgentRuntime({
        agents: [approvalAgent().agent],
        backend: memoryBackend(),
        logger: silent,
      }),
    );
    const handle = await runtime.submit("ops", "old.log");
    await handle.result();
    const server = await serve(runtime);
    const page = await signIn(server);
    await page.goto(`${server.url}#run/${handle.runId}`);
    const timeline = page.locator("#timeline");
    await expect.poll(() => timeline.textContent()).toContain("Waiting for a person: delete_file");

    await runtime.approve(handle.runId, "call_1", { by: "someone-else", reason: "from the CLI" });
    await expect.poll(() => timeline.textContent()).toContain("Run completed");
    expect(await timeline.textContent()).toContain("By someone-else");
    // The saves after the approval reached the open page too.
    expect(await page.locator("#timeline li.k-checkpoint strong").allTextContents()).toEqual([
      "Checkpoint: afterLlm",
      "Checkpoint: awaitingApproval",
      "Checkpoint: dispatch",
      "Checkpoint: compose",
      "Checkpoint: afterLlm",
      "Checkpoint: done",
    ]);
    expect(await page.locator("#run-summary").textContent()).toContain("completed");
    await page.screenshot({ path: `${SHOTS}/timeline.png`, fullPage: true });
  });

  it("shows each model call's tokens, the checkpoints, and a tool result raw and processed", async () => {
    const runtime = await started(
      new AgentRuntime({ agents: [readerAgent()], backend: memoryBackend(), logger: silent }),
    );
    const handle = await runtime.submit("reader", "Read the page.");
    expect((await handle.result()).status).toBe("completed");
    const server = await serve(runtime);
    const page = await signIn(server);
    await page.goto(`${server.url}#run/${handle.runId}`);
    const timeline = page.locator("#timeline");
    await expect.poll(() => timeline.textContent()).toContain("Run completed");

    const firstCall = page.locator("#timeline li", { hasText: "Model call 1" });
    expect(await firstCall.textContent()).toContain(
      "model-large · 120 in · 20 out · 900 cache read · 64 cache write",
    );
    expect(await page.locator("#timeline li", { hasText: "Model call 2" }).textContent()).toContain(
      "35 in · 7 out · 1020 cache read · 0 cache write",
    );
    const checkpoints = page.locator("#timeline li.k-checkpoint strong");
    expect(await checkpoints.allTextContents()).toEqual([
      "Checkpoint: afterLlm",
      "Checkpoint: dispatch",
      "Checkpoint: compose",
      "Checkpoint: afterLlm",
      "Checkpoint: done",
    ]);
    const fetched = page.locator("#timeline li", { hasText: "Tool result: fetch_page" });
    const raw = "<html>a long page at https://example.test/a</html>";
    expect(await fetched.locator(".raw-result").textContent()).toBe(raw);
    expect(await fetched.locator(".processed-result").textContent()).toBe(
      `summary of ${raw.length} characters`,
    );
    expect(await fetched.textContent()).toContain("before result middleware");
    const counted = page.locator("#timeline li", { hasText: "Tool result: word_count" });
    expect(await counted.textContent()).toContain("unchanged by result middleware");
    await page.screenshot({ path: `${SHOTS}/timeline-details.png`, fullPage: true });

    // A run whose input brings an earlier turn (with a call id the run reuses): the run's own
    // model calls and tool results still line up with their tokens and raw results.
    const text = (role: "user" | "assistant", value: string) => ({
      role,
      content: [{ type: "text" as const, text: value }],
    });
    const resumed = await runtime.submit("reader", [
      text("user", "Read the old page."),
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "call_1", name: "fetch_page", input: { url: "old" } }],
      },
      {
        role: "tool",
        content: [
          { type: "tool_result", toolCallId: "call_1", content: "old page", isError: false },
        ],
      },
      text("assistant", "Read it before."),
      text("user", "Read the page."),
    ]);
    expect((await resumed.result()).status).toBe("completed");
    await page.goto(`${server.url}#run/${resumed.runId}`);
    await expect.poll(() => page.locator("#run-title").textContent()).toBe(`Run ${resumed.runId}`);
    await expect.poll(() => timeline.textContent()).toContain("Run completed");
    expect(await page.locator("#timeline li", { hasText: "Earlier model turn" }).count()).toBe(2);
    expect(await page.locator("#timeline li", { hasText: "Model call 1" }).textContent()).toContain(
      "model-large · 120 in",
    );
    const again = page.locator("#timeline li", { hasText: "Tool result: fetch_page" });
    expect(await again.count()).toBe(1);
    expect(await again.locator(".raw-result").textContent()).toBe(raw);
  });

  it("never shows an input field a tool marks secret, in the inbox or the timeline", async () => {
    const canary = "canary-page-61204";
    const unlock = tool({
      name: "unlock",
      description: "Unlocks a device.",
      input: z.object({ device: z.string(), phrase: z.string().meta({ secret: true }) }),
      handler: async () => "unlocked",
    });
    const agent = makeAgent("keys", {
      provider: new ScriptedProvider([
        toolCallResponse([{ name: "unlock", input: { device: "laptop", phrase: canary } }]),
        textResponse("unlocked"),
      ]),
      tools: [unlock],
      permissions: new PermissionManager({
        default: "allow",
        rules: [{ tool: "unlock", decision: "ask", reason: "unlocking" }],
      }),
    });
    const runtime = await started(
      new AgentRuntime({ agents: [agent], backend: memoryBackend(), logger: silent }),
    );
    const handle = await runtime.submit("keys", "unlock my laptop");
    expect((await handle.result()).status).toBe("awaiting_approval");
    const server = await serve(runtime);
    const page = await signIn(server);
    await expect.poll(() => page.locator("#inbox").textContent()).toContain("unlock");
    expect(await page.locator("#inbox").textContent()).toContain("[redacted]");
    const inboxHtml = await page.content();
    await page.goto(`${server.url}#run/${handle.runId}`);
    const timeline = page.locator("#timeline");
    await expect.poll(() => timeline.textContent()).toContain("Waiting for a person: unlock");
    await runtime.approve(handle.runId, "call_1", { by: "ops-lead" });
    await expect.poll(() => timeline.textContent()).toContain("Run completed");
    expect(await timeline.textContent()).toContain("[redacted]");
    for (const html of [inboxHtml, await page.content()]) expect(html).not.toContain(canary);
  });

  it("updates the inbox without reload when another process parks a run and another decides it (Redis)", async () => {
    await requireRedis();
    const prefix = uniquePrefix();
    closers.push(() => deletePrefix(prefix));
    const backendFor = () =>
      redisBackend({ url: redisUrl(), prefix, lockDurationMs: 2000, stalledIntervalMs: 1000 });
    // The dashboard's runtime runs no workers; a second runtime (another process's) does the work.
    const viewer = await started(
      new AgentRuntime({ agents: [approvalAgent().agent], backend: backendFor(), logger: silent }),
      { workers: false },
    );
    const worker = await started(
      new AgentRuntime({ agents: [approvalAgent().agent], backend: backendFor(), logger: silent }),
    );
    const server = await serve(viewer);
    const page = await signIn(server);
    await expect.poll(() => page.locator("#live").textContent()).toBe("live");
    const items = page.locator("#inbox-list li");
    expect(await items.count()).toBe(0);

    const handle = await worker.submit("ops", "remote.log");
    await expect.poll(() => items.count()).toBe(1);
    expect(await items.first().textContent()).toContain("remote.log");

    await worker.approve(handle.runId, "call_1", { by: "elsewhere" });
    await expect.poll(() => items.count()).toBe(0);
    expect((await handle.result()).status).toBe("completed");
  });

  it("shows the overview's totals for a window, and searches runs by a run id prefix", async () => {
    const runtime = await started(
      new AgentRuntime({
        agents: [approvalAgent().agent, readerAgent()],
        backend: memoryBackend(),
        logger: silent,
      }),
    );
    const parked = await runtime.submit("ops", "one.log");
    await parked.result();
    await (await runtime.submit("ops", "two.log")).result();
    const read = await runtime.submit("reader", "https://example.com");
    const done = await read.result();
    expect(done.status).toBe("completed");
    const page = await signIn(await serve(runtime));
    await expect.poll(() => page.locator("#live").textContent()).toBe("live");
    await page.goto(`${page.url().split("#")[0]}#overview`);

    const tile = (status: string) =>
      page.locator(`#overview-counts [data-status="${status}"] .tile-number`);
    await expect.poll(() => tile("awaiting_approval").textContent()).toBe("2");
    expect(await tile("completed").textContent()).toBe("1");
    expect(await tile("failed").textContent()).toBe("0");
    expect(await page.locator("#overview-waiting").textContent()).toBe("2");
    expect(await page.locator("#overview-approvals time").count()).toBe(1);
    const reader = page.locator('#overview-agents tr[data-agent="reader"] td');
    expect(await reader.allTextContents()).toEqual([
      "1",
      String(done.usage.inputTokens),
      String(done.usage.outputTokens),
      String(done.usage.cacheReadTokens),
      String(done.usage.cacheWriteTokens),
    ]);
    expect(
      await page.locator('#overview-agents tr[data-agent="ops"] td').first().textContent(),
    ).toBe("2");
    await page.locator("#overview-window").selectOption("1h");
    await expect.poll(() => page.locator("#overview-note").textContent()).toContain("last 1h");
    expect(await tile("awaiting_approval").textContent()).toBe("2");
    await page.screenshot({ path: `${SHOTS}/overview.png`, fullPage: true });

    await page.goto(`${page.url().split("#")[0]}#runs`);
    await page.getByLabel("Search").fill(parked.runId.slice(0, 8));
    await page.getByRole("button", { name: "Filter" }).first().click();
    const rows = page.locator("#runs-body tr");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(parked.runId.slice(0, 8));
  });
});
