// The overview view: totals over a chosen window (the last hour, day or week), read from
// /api/overview — runs by status, calls waiting for a person and the oldest wait, tokens per
// agent, failures by code. Read when shown and when the window changes.
import { $, api, duration, h, timeElement } from "./dom.js";

const STATUSES = [
  "queued",
  "running",
  "waiting",
  "awaiting_approval",
  "paused",
  "completed",
  "failed",
  "cancelled",
];

const cell = (value) => h("td", { className: "number" }, String(value));

function render(overview) {
  $("overview-counts").replaceChildren(
    ...STATUSES.map((status) =>
      h(
        "div",
        { className: `tile status-${status}`, "data-status": status },
        h("span", { className: "tile-number" }, String(overview.counts[status] ?? 0)),
        h("span", { className: "tile-label" }, status.replaceAll("_", " ")),
      ),
    ),
  );
  const { waiting, oldestSince } = overview.approvals;
  $("overview-approvals").replaceChildren(
    h("span", { className: "tile-number", id: "overview-waiting" }, String(waiting)),
    ` run${waiting === 1 ? "" : "s"} waiting for a person`,
    oldestSince === null
      ? ""
      : h(
          "span",
          { className: "hint" },
          " · oldest since ",
          timeElement(oldestSince),
          ` (${duration(Date.now() - oldestSince)})`,
        ),
  );
  const agents = Object.entries(overview.usage.byAgent).sort(([a], [b]) => a.localeCompare(b));
  $("overview-agents").replaceChildren(
    ...agents.map(([agent, usage]) =>
      h(
        "tr",
        { "data-agent": agent },
        h("th", { scope: "row" }, agent),
        cell(usage.runs),
        cell(usage.inputTokens),
        cell(usage.outputTokens),
        cell(usage.cacheReadTokens),
        cell(usage.cacheWriteTokens),
      ),
    ),
  );
  $("overview-agents-empty").hidden = agents.length > 0;
  const codes = Object.entries(overview.failures.byCode).sort(([, a], [, b]) => b - a);
  $("overview-failures").replaceChildren(
    ...codes.map(([code, count]) =>
      h("li", { "data-code": code }, h("code", {}, code), ` ${count}`),
    ),
  );
  $("overview-failures-empty").hidden = codes.length > 0;
}

/** Reads the overview of the chosen window and draws it. */
export async function loadOverview() {
  const window = $("overview-window").value;
  const overview = await api(`api/overview?window=${encodeURIComponent(window)}`);
  render(overview);
  $("overview-note").textContent =
    `Runs created in the last ${window}; as of ${new Date().toLocaleTimeString()}.`;
}

export function initOverview() {
  $("overview-window").addEventListener("change", () => {
    void loadOverview().catch(
      (error) => ($("overview-note").textContent = `Failed: ${error.message}`),
    );
  });
}
