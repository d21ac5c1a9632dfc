// The approvals inbox: the calls waiting for a person, oldest first, one bounded page of cards
// (however many wait), each decided alone or with others; a decision that fails keeps its card
// and says why.

import { decideForms, decisionPath, joinsQuorum, quorumLine } from "./decide-forms.js";
import {
  $,
  api,
  dateTime,
  duration,
  failureOf,
  h,
  json,
  perFrame,
  placeChildren,
  refreshElapsed,
  setText,
  shortRunId,
  toast,
} from "./dom.js";
import { mayDecide } from "./scope.js";
import { inboxTreeLink } from "./tree.js";

/** Cards shown at most; the rest wait their turn (their count is shown). */
export const INBOX_PAGE = 50;
const DECIDED_SHOWN = 5;
const CONTEXT_FETCHES = 4;

const state = {
  entries: new Map(), // key → entry, every waiting call known
  byRun: new Map(), // runId → the keys of its entries
  cards: new Map(), // key → { li, entry } for the cards on screen
  shown: [], // keys of the cards on screen, in order
  checked: new Set(), // keys selected for a bulk decision
  deciding: new Set(), // keys whose decision is on its way
  selected: 0,
  filters: { agent: "", tool: "" },
  context: new Map(), // runId → { request, words } | null while it loads
  contextQueue: [],
  contextActive: 0,
  decided: [], // { runId, name, decision, status, element } newest first
  statusWhileDeciding: new Map(), // runId → status the stream said while a decision was on its way
  elapsedAt: 0, // when the cards' "waiting …" times were last written
};

export const inboxKey = (entry) => `${entry.runId}\u0000${entry.toolCallId}`;

function addEntry(entry) {
  if (!mayDecide(entry)) return;
  const key = inboxKey(entry);
  state.entries.set(key, entry);
  const keys = state.byRun.get(entry.runId);
  if (keys) keys.add(key);
  else state.byRun.set(entry.runId, new Set([key]));
}

function removeEntry(key) {
  const entry = state.entries.get(key);
  if (!entry) return;
  state.entries.delete(key);
  const keys = state.byRun.get(entry.runId);
  keys?.delete(key);
  if (keys?.size === 0) state.byRun.delete(entry.runId);
}
const visible = () => !$("inbox").hidden;
const matches = (entry) =>
  (!state.filters.agent || entry.agent === state.filters.agent) &&
  (!state.filters.tool || entry.name === state.filters.tool);

function shownEntries() {
  return [...state.entries.values()]
    .filter(matches)
    .sort((a, b) => a.since - b.since || (a.runId < b.runId ? -1 : 1))
    .slice(0, INBOX_PAGE);
}

/** Reads every waiting call again (at start and whenever the live stream reconnects). */
export async function loadInbox() {
  const fresh = [];
  let cursor = null;
  do {
    const query = new URLSearchParams({ limit: "500" });
    if (cursor) query.set("cursor", cursor);
    const page = await api(`api/approvals?${query}`);
    fresh.push(...page.approvals);
    cursor = page.nextCursor;
  } while (cursor);
  // A card whose decision is on its way stays as it is until the answer comes.
  const deciding = [...state.deciding].map((key) => state.entries.get(key)).filter(Boolean);
  state.entries = new Map();
  state.byRun = new Map();
  for (const entry of [...fresh, ...deciding]) addEntry(entry);
  scheduleRender();
}

/** Run status changes from the live stream: a run's waiting calls are its `pending`. */
export function applyRunChanges(runs) {
  for (const run of runs) {
    if (
      state.deciding.size > 0 &&
      [...state.deciding].some((key) => key.startsWith(`${run.runId}\u0000`))
    ) {
      state.statusWhileDeciding.set(run.runId, run.status);
    }
    for (const key of [...(state.byRun.get(run.runId) ?? [])]) {
      if (!state.deciding.has(key)) removeEntry(key);
    }
    if (run.status === "awaiting_approval") {
      for (const call of run.pending) {
        addEntry({
          runId: run.runId,
          agent: run.agent,
          ...call,
          since: run.updatedAt,
          rootRunId: run.rootRunId ?? run.runId,
        });
      }
    }
    for (const decided of state.decided) {
      if (decided.runId === run.runId && decided.status !== run.status) {
        decided.status = run.status;
        decided.element.querySelector(".decided-status").textContent = run.status;
        decided.element.className = `status-${run.status}`;
      }
    }
  }
  scheduleRender();
}

const scheduleRender = perFrame(() => renderInbox());

/** Draws the inbox: the count always, the cards only while the inbox is on screen. */
export function renderInbox() {
  setText($("inbox-count"), String(state.entries.size));
  if (!visible()) return;
  const entries = shownEntries();
  const total = [...state.entries.values()].filter(matches).length;
  $("inbox-empty").hidden = total > 0;
  $("inbox-more").hidden = total <= entries.length;
  setText(
    $("inbox-more"),
    `${total - entries.length} more waiting: decide these first, or filter by agent or tool.`,
  );
  const keys = entries.map(inboxKey);
  for (const [key, card] of state.cards) {
    if (!keys.includes(key)) state.cards.delete(key);
    else card.entry = state.entries.get(key) ?? card.entry;
  }
  for (const key of state.checked) if (!state.entries.has(key)) state.checked.delete(key);
  const list = $("inbox-list");
  const cards = entries.map((entry) => {
    const key = inboxKey(entry);
    let card = state.cards.get(key);
    if (card === undefined) {
      card = { li: cardOf(entry), entry };
      state.cards.set(key, card);
    }
    return card.li;
  });
  if (keys.length !== state.shown.length || keys.some((key, at) => key !== state.shown[at])) {
    const focused = document.activeElement;
    placeChildren(list, cards);
    if (focused instanceof HTMLElement && list.contains(focused)) focused.focus();
    state.shown = keys;
  }
  state.selected = Math.min(state.selected, Math.max(0, keys.length - 1));
  for (const [index, li] of cards.entries()) {
    li.classList.toggle("selected", index === state.selected);
    if (index === state.selected) li.setAttribute("aria-current", "true");
    else li.removeAttribute("aria-current");
  }
  renderBulkBar();
  // Waits are written once a second (tickInbox), not on every run change the stream brings.
  if (Date.now() - state.elapsedAt >= 1000) tickInbox();
  for (const entry of entries) wantContext(entry.runId);
}

function renderBulkBar() {
  const count = state.checked.size;
  setText($("bulk-approve"), `Approve selected (${count})`);
  setText($("bulk-deny"), `Deny selected (${count})`);
  $("bulk-approve").disabled = count === 0;
  $("bulk-deny").disabled = count === 0;
  $("select-all").checked = count > 0 && state.shown.every((key) => state.checked.has(key));
}

function cardOf(entry) {
  const key = inboxKey(entry);
  const id = `${entry.runId}-${entry.toolCallId}`.replace(/[^\w-]/g, "_");
  const reason = h("input", {
    id: `reason-${id}`,
    "data-key": key,
    className: "reason",
    placeholder: "Reason (optional)",
    autocomplete: "off",
  });
  const select = h("input", {
    type: "checkbox",
    className: "pick",
    "aria-label": `Select ${entry.name} of run ${shortRunId(entry.runId, entry.rootRunId)}`,
    onchange: (event) => {
      if (event.target.checked) state.checked.add(key);
      else state.checked.delete(key);
      renderBulkBar();
    },
  });
  select.checked = state.checked.has(key);
  const decide = (decision) => () => void decideCall(entry, decision, reason.value);
  const decideWith = (decision, extra) => void decideCall(entry, decision, reason.value, extra);
  return h(
    "li",
    { "data-key": key, tabindex: "-1" },
    h(
      "div",
      { className: "head" },
      select,
      h("span", { className: "tool" }, entry.name),
      h("span", {}, "agent ", entry.agent),
      h(
        "a",
        { href: `#run/${encodeURIComponent(entry.runId)}` },
        "run ",
        shortRunId(entry.runId, entry.rootRunId),
      ),
      inboxTreeLink(entry),
      h(
        "span",
        {
          className: "waited",
          title: `waiting since ${dateTime(entry.since)}`,
          "data-elapsed-since": entry.since,
          "data-elapsed-prefix": "waiting ",
        },
        `waiting ${duration(Date.now() - entry.since)}`,
      ),
    ),
    h("div", { className: "why" }, "Asks because: ", entry.reason || "(no reason given)"),
    h("div", { className: "context" }, contextOf(entry.runId)),
    h("pre", { "aria-label": "Input" }, json(entry.input)),
    quorumLine(entry),
    h("p", { className: "card-error error", role: "alert", hidden: true }),
    h(
      "div",
      { className: "decide" },
      h("label", { for: `reason-${id}`, className: "visually-hidden" }, "Reason"),
      reason,
      h("button", { type: "button", className: "approve", onclick: decide("allow") }, "Approve"),
      h("button", { type: "button", className: "deny", onclick: decide("deny") }, "Deny"),
      ...decideForms(entry, decideWith),
    ),
  );
}

// ---- context: the run's request and the model's last words, read for the cards on screen ----

function contextOf(runId) {
  const context = state.context.get(runId);
  if (!context) return h("span", { className: "hint" }, "Reading the run…");
  return [
    h("div", {}, h("span", { className: "label" }, "Request"), h("q", {}, context.request)),
    h("div", {}, h("span", { className: "label" }, "Model said"), h("q", {}, context.words)),
  ];
}

const textOf = (message) =>
  message.content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n")
    .trim();

function wantContext(runId) {
  if (state.context.has(runId)) return;
  state.context.set(runId, null);
  state.contextQueue.push(runId);
  pumpContext();
}

function pumpContext() {
  while (state.contextActive < CONTEXT_FETCHES && state.contextQueue.length > 0) {
    const runId = state.contextQueue.shift();
    state.contextActive += 1;
    api(`api/runs/${encodeURIComponent(runId)}`)
      .then((detail) => {
        const request = detail.messages.find((message) => message.role === "user");
        const said = detail.messages.findLast((message) => message.role === "assistant");
        state.context.set(runId, {
          request: (request && textOf(request)) || "(no text)",
          words: (said && textOf(said)) || "(nothing but the call)",
        });
        for (const card of state.cards.values()) {
          if (card.entry.runId === runId) {
            card.li.querySelector(".context").replaceChildren(...contextOf(runId));
          }
        }
      })
      .catch(() => state.context.delete(runId))
      .finally(() => {
        state.contextActive -= 1;
        pumpContext();
      });
  }
}

// ---- deciding --------------------------------------------------------------------------

/** Shows (or clears) why the last decision on a card failed. */
function showCardError(key, message) {
  const card = state.cards.get(key);
  if (!card) return;
  const element = card.li.querySelector(".card-error");
  element.textContent = message ?? "";
  element.hidden = message === undefined;
  for (const button of card.li.querySelectorAll(".decide button")) {
    button.disabled = state.deciding.has(key);
  }
}

function recordDecided(entry, decision) {
  // The stream may have said how the run went on before the decision's answer came.
  const status = state.statusWhileDeciding.get(entry.runId) ?? "decided";
  const element = h(
    "li",
    { className: `status-${status}` },
    `${DONE[decision]} ${entry.name} · `,
    h(
      "a",
      { href: `#run/${encodeURIComponent(entry.runId)}` },
      `run ${shortRunId(entry.runId, entry.rootRunId)}`,
    ),
    " · ",
    h("span", { className: "decided-status" }, status),
  );
  state.decided.unshift({ runId: entry.runId, name: entry.name, decision, status, element });
  state.decided.length = Math.min(state.decided.length, DECIDED_SHOWN);
  $("decided").replaceChildren(...state.decided.map((each) => each.element));
  $("decided-box").hidden = false;
}

const DONE = { allow: "Approved", deny: "Denied", respond: "Answered" };

/** What a decision's answer means for its card: gone (decided) or kept with the error. */
function settle(entry, decision, failure) {
  const key = inboxKey(entry);
  state.deciding.delete(key);
  if (failure === undefined && joinsQuorum(entry, decision)) {
    // Counted, and the call waits for others: the card stays, showing one approval more.
    entry.approvals = {
      ...entry.approvals,
      given: [...entry.approvals.given, { by: "you", at: Date.now(), reason: null }],
    };
    const card = state.cards.get(key);
    card?.li.querySelector(".quorum")?.replaceWith(quorumLine(entry));
    showCardError(key, undefined);
    return;
  }
  if (failure === undefined) recordDecided(entry, decision);
  if (![...state.deciding].some((each) => each.startsWith(`${entry.runId}\u0000`))) {
    state.statusWhileDeciding.delete(entry.runId);
  }
  if (failure === undefined || failure.code === "already_decided") {
    removeEntry(key);
    state.checked.delete(key);
  } else {
    showCardError(key, `Not decided: ${failure.message}`);
  }
  scheduleRender();
}

/**
 * Approves or denies one call. Its card leaves the inbox only when the dashboard says the
 * decision is recorded (or was already made elsewhere); on any other answer it stays, with why.
 * Resolves with the failure, if any, for the caller to show as well.
 */
export async function decideCall(entry, decision, reason, extra = {}) {
  const key = inboxKey(entry);
  if (state.deciding.has(key)) return undefined;
  state.deciding.add(key);
  showCardError(key, undefined);
  try {
    const body = { ...(reason ? { reason } : {}), ...extra };
    await api(decisionPath(entry, decision), { method: "POST", body });
    toast(`${DONE[decision]} ${entry.name}`);
    settle(entry, decision, undefined);
    return undefined;
  } catch (error) {
    const failure = { code: error.code, message: failureOf(error) };
    toast(
      error.code === "already_decided"
        ? "Already decided elsewhere."
        : `Failed: ${failure.message}`,
    );
    settle(entry, decision, failure);
    return failure;
  }
}

/** Decides every selected call with one request; each item succeeds or fails on its own. */
async function decideSelected(decision) {
  const entries = [...state.checked].map((key) => state.entries.get(key)).filter(Boolean);
  if (entries.length === 0) return;
  const reason = $("bulk-reason").value.trim();
  for (const entry of entries) {
    state.deciding.add(inboxKey(entry));
    showCardError(inboxKey(entry), undefined);
  }
  try {
    const { results } = await api("api/approvals/decide", {
      method: "POST",
      body: {
        items: entries.map(({ runId, toolCallId }) => ({ runId, toolCallId })),
        decision,
        ...(reason ? { reason } : {}),
      },
    });
    let failed = 0;
    for (const [at, result] of results.entries()) {
      if (!result.ok && result.error?.code !== "already_decided") failed += 1;
      settle(entries[at], decision, result.ok ? undefined : result.error);
    }
    const done = results.length - failed;
    toast(`${decision === "allow" ? "Approved" : "Denied"} ${done} of ${results.length}`);
  } catch (error) {
    for (const entry of entries) {
      settle(entry, decision, { code: error.code, message: failureOf(error) });
    }
    toast(`Failed: ${failureOf(error)}`);
  }
}

// ---- selection and keys ---------------------------------------------------------------

export function selectedEntry() {
  return state.cards.get(state.shown[state.selected])?.entry;
}

export function selectedCard() {
  return state.cards.get(state.shown[state.selected])?.li;
}

export function moveSelection(by) {
  const count = state.shown.length;
  if (count === 0) return;
  state.selected = (state.selected + by + count) % count;
  renderInbox();
  selectedCard()?.scrollIntoView({ block: "nearest" });
}

export function toggleSelected() {
  const card = selectedCard();
  const box = card?.querySelector("input.pick");
  if (!box) return;
  box.checked = !box.checked;
  box.dispatchEvent(new Event("change"));
}

/** Wires the inbox's own controls: the filters and the bulk bar. */
export function initInbox() {
  $("inbox-filters").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    state.filters = {
      agent: String(form.get("agent") ?? "").trim(),
      tool: String(form.get("tool") ?? "").trim(),
    };
    state.selected = 0;
    renderInbox();
  });
  $("select-all").addEventListener("change", (event) => {
    for (const key of state.shown) {
      if (event.target.checked) state.checked.add(key);
      else state.checked.delete(key);
      const box = state.cards.get(key)?.li.querySelector("input.pick");
      if (box) box.checked = event.target.checked;
    }
    renderBulkBar();
  });
  $("bulk-approve").addEventListener("click", () => void decideSelected("allow"));
  $("bulk-deny").addEventListener("click", () => void decideSelected("deny"));
}

/** Forgets everything (sign-out). */
export function resetInbox() {
  state.entries.clear();
  state.byRun.clear();
  state.cards.clear();
  state.shown = [];
  state.checked.clear();
  state.context.clear();
  state.decided = [];
  $("inbox-list").replaceChildren();
  $("decided").replaceChildren();
  $("decided-box").hidden = true;
}

/** Keeps the cards' waiting times current. */
export function tickInbox() {
  state.elapsedAt = Date.now();
  refreshElapsed($("inbox-list"));
}
