// The README's dashboard screenshots, taken again: an embedded runtime (memory) with a mix of
// runs — answered, failed, one completed with a failed tool call, refunds waiting for a person,
// and research-and-write run trees (the agents of examples/research-and-write.ts) — and the
// dashboard over it, photographed in Debian's Chromium (playwright-core, as the page tests):
//   node --import tsx scripts/screenshots.mjs        # writes docs/dashboard-*.png
// CHROMIUM_PATH overrides /usr/bin/chromium. Nothing leaves the machine: the models are scripted.
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { chromium } from "playwright-core";
import { z } from "zod";
import { researchTeam } from "../examples/support/research-team.ts";
import {
  Agent,
  AgentRuntime,
  createDashboard,
  memoryBackend,
  ProviderError,
  tool,
} from "../src/index.js";
import { demoSupportAgent, textResponse, toolCallResponse } from "../src/testing.js";

const DOCS = fileURLToPath(new URL("../docs/", import.meta.url));
const TOKEN = "screenshots-token-0123456789";
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"];
const logger = pino({ level: "silent" });

/** Restarts a service: a fixture whose handler fails for a service it does not know. */
const restart = tool({
  name: "restart_service",
  description: "Restart a service (a fixture).",
  input: z.object({ service: z.string() }),
  handler: async ({ service }) => {
    if (service !== "search-api") throw new Error(`no service named ${service}`);
    return `restarted ${service}`;
  },
});

/** Ops: asks for a restart, then reports how it went (a failed call is flagged on the page). */
const ops = new Agent({
  provider: {
    name: "scripted-ops",
    async complete(request) {
      const last = request.messages.at(-1);
      const result = last?.role === "tool" ? last.content[0] : undefined;
      if (result?.type === "tool_result") {
        return textResponse(
          result.isError ? `Could not restart it: ${result.content}` : "Restarted; it answers.",
        );
      }
      const asked = request.messages[0]?.content[0];
      const service = asked?.type === "text" ? (asked.text.split(" ").at(-1) ?? "") : "";
      return toolCallResponse([{ name: "restart_service", input: { service } }]);
    },
  },
  tools: [restart],
  config: { name: "ops" },
  logger,
});

/** Support: looks orders up, and asks a person before a refund (the demo's agent, with words). */
const support = demoSupportAgent({
  logger,
  provider: {
    name: "scripted-support",
    async complete(request) {
      const last = request.messages.at(-1);
      const result = last?.role === "tool" ? last.content[0] : undefined;
      if (result?.type === "tool_result") return textResponse(`Done: ${result.content}.`);
      const asked = request.messages[0]?.content[0];
      const question = asked?.type === "text" ? asked.text : "";
      const orderId = question.replace(/\D/g, "");
      if (!question.startsWith("Refund")) {
        return toolCallResponse([{ name: "search", input: { query: `order ${orderId}` } }]);
      }
      return toolCallResponse([{ name: "refund_order", input: { orderId } }], {
        text: `Order ${orderId} arrived damaged and the customer sent photos; refunding it.`,
      });
    },
  },
});

/** Billing: its model refuses every request as too long (a failed run, code context_too_long). */
const billing = new Agent({
  provider: {
    name: "scripted-billing",
    async complete() {
      throw new ProviderError("The prompt is 212,000 tokens; the model takes 200,000.", {
        code: "context_too_long",
      });
    },
  },
  config: { name: "billing" },
  logger,
});

const team = researchTeam(logger);
const runtime = new AgentRuntime({
  agents: [support, team.lead, team.researcher, team.writer, ops, billing],
  backend: memoryBackend(),
  logger,
});
await runtime.start();
const server = await createDashboard({ runtime, tokens: { "ops-lead": TOKEN } }).listen({
  port: 0,
  host: "127.0.0.1",
});
const browser = await chromium.launch({
  executablePath: CHROMIUM_PATH,
  args: CHROMIUM_ARGS,
  headless: true,
});
try {
  const submitted = [
    ...[1041, 1042, 1043, 1044, 1045].map((id) => ["support", `Where is order ${id}?`]),
    ["lead", "Lisbon: trams, pastries"],
    ["ops", "Restart payments-api"],
    ["ops", "Restart search-api"],
    ["billing", "Summarise every invoice of 2026"],
    ["lead", "Porto: tiles, trams"],
    ...[2070, 2071, 2072, 2073].map((id) => ["support", `Refund order ${id}`]),
  ];
  const handles = [];
  for (const [agent, input] of submitted) {
    const handle = await runtime.submit(agent, input);
    await handle.result();
    handles.push(handle);
  }
  const tree = handles[5]; // Lisbon: trams, pastries

  const context = await browser.newContext({
    viewport: { width: 1200, height: 760 },
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  await page.goto(server.url);
  await page.getByLabel("Dashboard token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForFunction(() => document.getElementById("live")?.textContent === "live");

  await page.goto(`${server.url}#overview`);
  await page.waitForSelector("#overview-agents tr");
  await shoot(page, "dashboard-overview.png");

  // One refund approved from the page (it shows under "Just decided"), one card selected.
  await page.goto(`${server.url}#inbox`);
  const cards = page.locator("#inbox-list > li");
  await page.waitForFunction(() => document.querySelectorAll("#inbox-list > li").length === 4);
  await cards.first().locator("input.reason").fill("photos checked");
  await cards.first().getByRole("button", { name: "Approve", exact: true }).click();
  await page.waitForFunction(() =>
    [...document.querySelectorAll("#decided .decided-status")].some(
      (status) => status.textContent === "completed",
    ),
  );
  await cards.nth(1).locator("input.pick").check();
  await shoot(page, "dashboard-inbox.png");

  await page.goto(`${server.url}#runs`);
  await page.waitForFunction(
    (count) => document.querySelectorAll("#runs-body tr").length >= count,
    handles.length,
  );
  await shoot(page, "dashboard-runs.png");

  await page.goto(`${server.url}#run/${encodeURIComponent(tree.runId)}`);
  await page.waitForSelector("#run-summary .tree-children a");
  await page.waitForSelector("#timeline li");
  await shoot(page, "dashboard-tree.png", { fullPage: false });

  // A phone: a page of its own, signed in with the token the tab keeps.
  const phone = await (
    await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 })
  ).newPage();
  await phone.goto(server.url);
  await phone.getByLabel("Dashboard token").fill(TOKEN);
  await phone.getByRole("button", { name: "Sign in" }).click();
  await phone.goto(`${server.url}#runs`);
  await phone.waitForFunction(() => document.querySelectorAll("#runs-body tr").length > 0);
  await shoot(phone, "dashboard-phone.png", { fullPage: false });
} finally {
  await browser.close();
  await server.close();
  await runtime.close({ timeoutMs: 5_000 });
}

/** A PNG into docs/ (the whole page unless told), scrolled to the top, once the page has drawn. */
async function shoot(page, name, { fullPage = true } = {}) {
  await page.evaluate(() => {
    window.scrollTo(0, 0);
    document.getElementById("toast")?.classList.remove("show"); // a decision's passing notice
  });
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  await page.screenshot({ path: `${DOCS}${name}`, fullPage });
  process.stderr.write(`[screenshots] docs/${name}\n`);
}
