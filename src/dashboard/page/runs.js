// The runs view: one page of runs at a time (never more rows than the page size), newest first.
// A change to a run on the page updates its row alone; runs that start meanwhile are counted in
// "N new runs" instead of pushing the page down; nothing is drawn while the view is hidden.
import {
  $,
  api,
  duration,
  FINISHED,
  h,
  perFrame,
  refreshElapsed,
  shortRunId,
  timeElement,
} from "./dom.js";
import { treeCellLink } from "./tree.js";

/** Rows on one page. */
export const RUNS_PAGE = 50;

const state = {
  rows: new Map(), // runId → { run, tr } for the rows on screen
  changed: new Map(), // runId → the newest summary of a row, not drawn yet
  fresh: new Set(), // runs started since the page was read that belong on it
  cursors: [null], // the cursor of each page read so far; the last is the page on screen
  next: null,
  filters: {},
};

const visible = () => !$("runs").hidden;
/** Does a run from the stream belong on the filtered page (as /api/runs would list it)? */
function matches(run) {
  const { q, since, until, rootRunId, ...exact } = state.filters;
  return (
    (!rootRunId || run.rootRunId === rootRunId || run.runId === rootRunId) &&
    Object.entries(exact).every(([name, value]) => !value || run[name] === value) &&
    (!q || run.runId.startsWith(q) || run.sessionId === q) &&
    (!since || run.createdAt >= since) &&
    (!until || run.createdAt < until)
  );
}

/** The form's filters, its local times as ms since the epoch. */
function filtersOf(form) {
  const filters = Object.fromEntries(new FormData(form));
  for (const name of ["since", "until"]) {
    filters[name] = filters[name] ? new Date(filters[name]).getTime() : "";
  }
  return filters;
}

/** Text that may break after each underscore on a narrow screen (`awaiting_approval`). */
const breakable = (text) =>
  text.split("_").flatMap((part, index) => (index === 0 ? [part] : ["_", h("wbr"), part]));

function statusCell(run) {
  return h(
    "td",
    { className: `status status-${run.status}`, "data-status": run.status },
    breakable(run.status),
    run.error ? h("span", { className: "error-code" }, " · ", breakable(run.error.code)) : null,
  );
}

function tookCell(run) {
  if (FINISHED.includes(run.status)) {
    return h("td", { className: "took" }, duration(run.updatedAt - run.createdAt));
  }
  return h(
    "td",
    { className: "took", "data-elapsed-since": run.createdAt, "data-elapsed-prefix": "for " },
    `for ${duration(Date.now() - run.createdAt)}`,
  );
}

function rowOf(run) {
  return h(
    "tr",
    { "data-run": run.runId, className: `row-${run.status}` },
    h(
      "td",
      { className: "run-id" },
      h(
        "a",
        { href: `#run/${encodeURIComponent(run.runId)}` },
        shortRunId(run.runId, run.rootRunId),
      ),
      treeCellLink(run),
    ),
    h("td", {}, run.agent),
    statusCell(run),
    h("td", { className: "wide" }, run.phase),
    h("td", { className: "wide" }, String(run.iterations)),
    h("td", { className: "wide" }, String(run.usage.inputTokens + run.usage.outputTokens)),
    h("td", { className: "created" }, timeElement(run.createdAt)),
    tookCell(run),
  );
}

function renderBanner() {
  const banner = $("new-runs");
  banner.hidden = state.fresh.size === 0;
  banner.textContent = `${state.fresh.size} new run${state.fresh.size === 1 ? "" : "s"}: show`;
}

function renderPager() {
  $("older").hidden = !state.next;
  $("newer").hidden = state.cursors.length <= 1;
  $("page-note").textContent =
    state.rows.size === 0
      ? "No runs."
      : `Page ${state.cursors.length} · ${state.rows.size} run${state.rows.size === 1 ? "" : "s"}`;
}

/** Reads one page (the first, the next older one, or the one before) and draws it whole. */
export async function loadRuns(which = "first") {
  if (which === "first") state.cursors = [null];
  else if (which === "older" && state.next) state.cursors.push(state.next);
  else if (which === "newer" && state.cursors.length > 1) state.cursors.pop();
  const query = new URLSearchParams({ limit: String(RUNS_PAGE) });
  for (const [name, value] of Object.entries(state.filters))
    if (value) query.set(name, String(value));
  const cursor = state.cursors.at(-1);
  if (cursor) query.set("cursor", cursor);
  const page = await api(`api/runs?${query}`);
  state.rows = new Map(page.runs.map((run) => [run.runId, { run, tr: rowOf(run) }]));
  state.changed.clear();
  if (which === "first") state.fresh.clear();
  state.next = page.nextCursor;
  $("runs-body").replaceChildren(...[...state.rows.values()].map((row) => row.tr));
  renderBanner();
  renderPager();
}

const drawChanges = perFrame(() => {
  if (!visible()) return;
  for (const [runId, run] of state.changed) {
    const row = state.rows.get(runId);
    if (!row) continue;
    const tr = rowOf(run);
    row.tr.replaceWith(tr);
    row.tr = tr;
    row.run = run;
  }
  state.changed.clear();
  renderBanner();
});

/** Run status changes from the live stream. */
export function applyRunChanges(runs) {
  // Hidden, the view keeps nothing: showing it reads its page again.
  if (!visible()) return;
  const newest =
    state.rows.size === 0
      ? -1
      : Math.max(...[...state.rows.values()].map((row) => row.run.createdAt));
  for (const run of runs) {
    if (state.rows.has(run.runId)) state.changed.set(run.runId, run);
    else if (run.createdAt >= newest && matches(run)) state.fresh.add(run.runId);
  }
  drawChanges();
}

export function setRunFilters(filters) {
  state.filters = filters;
}

/** Lists the runs of one tree (the route `#runs/root/<id>`): the form shows the filter. */
export function showTree(rootRunId) {
  const form = $("filters");
  form.reset();
  form.elements.rootRunId.value = rootRunId;
  state.filters = filtersOf(form);
}

/** Keeps the "for …" durations of running runs current. */
export function tickRuns() {
  if (visible()) refreshElapsed($("runs-body"));
}

export function initRuns() {
  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    state.filters = filtersOf(event.target);
    void loadRuns().catch((error) => $("page-note").replaceChildren(`Failed: ${error.message}`));
  });
  $("new-runs").addEventListener("click", () => void loadRuns());
  $("older").addEventListener("click", () => void loadRuns("older"));
  $("newer").addEventListener("click", () => void loadRuns("newer"));
}
