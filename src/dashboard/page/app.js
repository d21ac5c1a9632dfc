// The harnessx dashboard page: plain DOM, no framework. Every piece of data enters the page as
// text (textContent), never as HTML.

const TOKEN_KEY = "harnessx-token";
const $ = (id) => document.getElementById(id);

/** An element with attributes and children; strings become text nodes. */
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "className") element.className = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  inbox: new Map(), // `${runId}\u0000${toolCallId}` → entry
  selected: 0,
  runs: new Map(), // runId → summary (the rows shown)
  runsCursor: null,
  filters: {},
  openRun: null, // { runId, source, next, refresh }
  stream: null,
  config: { queues: false, readOpen: false },
};

class HttpError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code;
  }
}

async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const parsed = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401) showLogin();
    throw new HttpError(response.status, parsed);
  }
  return parsed;
}

function toast(text) {
  const element = $("toast");
  element.textContent = text;
  element.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => element.classList.remove("show"), 3000);
}

const waited = (since) => {
  const seconds = Math.max(0, Math.round((Date.now() - since) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
};
const json = (value) => JSON.stringify(value, null, 2);
const time = (ms) => new Date(ms).toLocaleTimeString();
const tokens = (usage) =>
  `${usage.inputTokens} in · ${usage.outputTokens} out · ${usage.cacheReadTokens} cache read · ${usage.cacheWriteTokens} cache write`;

// ---- sign-in ----------------------------------------------------------------------------

function showLogin(message = "") {
  for (const id of ["inbox", "runs", "run"]) $(id).hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message;
  $("token").focus();
}

async function signIn(token) {
  state.token = token;
  try {
    await api("api/session", { method: "POST" }); // the cookie lets EventSource streams read
    sessionStorage.setItem(TOKEN_KEY, token);
    $("login").hidden = true;
    await start();
  } catch (error) {
    state.token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(error.status === 401 ? "That token is not known here." : error.message);
  }
}

// ---- the inbox --------------------------------------------------------------------------

const inboxKey = (entry) => `${entry.runId}\u0000${entry.toolCallId}`;

function sortedInbox() {
  return [...state.inbox.values()].sort((a, b) => a.since - b.since);
}

function renderInbox() {
  const entries = sortedInbox();
  $("inbox-count").textContent = String(entries.length);
  $("inbox-empty").hidden = entries.length > 0;
  state.selected = Math.min(state.selected, Math.max(0, entries.length - 1));
  const list = $("inbox-list");
  const focused = document.activeElement?.dataset?.key;
  const typed = new Map(
    [...list.querySelectorAll("input")].map((input) => [input.dataset.key, input.value]),
  );
  list.replaceChildren(
    ...entries.map((entry, index) => {
      const key = inboxKey(entry);
      const reasonId = `reason-${index}`;
      const reason = h("input", {
        id: reasonId,
        "data-key": key,
        placeholder: "Reason (optional)",
        autocomplete: "off",
      });
      reason.value = typed.get(key) ?? "";
      const decide = (decision) => () => decideCall(entry, decision, reason.value);
      return h(
        "li",
        {
          className: index === state.selected ? "selected" : "",
          "data-key": key,
          tabindex: "-1",
          "aria-current": index === state.selected ? "true" : undefined,
        },
        h(
          "div",
          { className: "head" },
          h("span", { className: "tool" }, entry.name),
          h("span", {}, "agent ", entry.agent),
          h(
            "a",
            { href: `#run/${encodeURIComponent(entry.runId)}` },
            "run ",
            entry.runId.slice(0, 8),
          ),
          h(
            "span",
            { className: "waited", "data-since": entry.since },
            `waiting ${waited(entry.since)}`,
          ),
        ),
        h("div", { className: "why" }, "Asks because: ", entry.reason || "(no reason given)"),
        h("pre", { "aria-label": "Input" }, json(entry.input)),
        h(
          "div",
          { className: "decide" },
          h("label", { for: reasonId, className: "visually-hidden" }, "Reason"),
          reason,
          h(
            "button",
            { type: "button", className: "approve", onclick: decide("allow") },
            "Approve",
          ),
          h("button", { type: "button", className: "deny", onclick: decide("deny") }, "Deny"),
        ),
      );
    }),
  );
  if (focused) list.querySelector(`input[data-key="${CSS.escape(focused)}"]`)?.focus();
}

async function loadInbox() {
  const fresh = new Map();
  let cursor = null;
  do {
    const page = await api(
      `api/approvals?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    for (const entry of page.approvals) fresh.set(inboxKey(entry), entry);
    cursor = page.nextCursor;
  } while (cursor);
  state.inbox = fresh;
  renderInbox();
}

async function decideCall(entry, decision, reason) {
  const path = `api/runs/${encodeURIComponent(entry.runId)}/calls/${encodeURIComponent(entry.toolCallId)}/${decision === "allow" ? "approve" : "deny"}`;
  try {
    await api(path, { method: "POST", body: reason ? { reason } : {} });
    toast(`${decision === "allow" ? "Approved" : "Denied"} ${entry.name}`);
  } catch (error) {
    toast(error.status === 409 ? "Already decided elsewhere." : `Failed: ${error.message}`);
  }
  state.inbox.delete(inboxKey(entry));
  renderInbox();
}

// ---- runs -------------------------------------------------------------------------------

function runRow(run) {
  return h(
    "tr",
    { "data-run": run.runId },
    h("td", {}, h("a", { href: `#run/${encodeURIComponent(run.runId)}` }, run.runId.slice(0, 8))),
    h("td", {}, run.agent),
    h("td", { className: `status status-${run.status}` }, run.status),
    h("td", {}, run.phase),
    h("td", {}, String(run.iterations)),
    h("td", {}, String(run.usage.inputTokens + run.usage.outputTokens)),
    h("td", {}, time(run.updatedAt)),
  );
}

function renderRuns() {
  const rows = [...state.runs.values()].sort(
    (a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : -1),
  );
  $("runs-body").replaceChildren(...rows.map(runRow));
  $("more").hidden = !state.runsCursor;
}

async function loadRuns({ more = false } = {}) {
  const query = new URLSearchParams({ limit: "50" });
  for (const [name, value] of Object.entries(state.filters)) if (value) query.set(name, value);
  if (more && state.runsCursor) query.set("cursor", state.runsCursor);
  const page = await api(`api/runs?${query}`);
  if (!more) state.runs = new Map();
  for (const run of page.runs) state.runs.set(run.runId, run);
  state.runsCursor = page.nextCursor;
  renderRuns();
}

const matchesFilters = (run) =>
  Object.entries(state.filters).every(([name, value]) => !value || run[name] === value);

// ---- one run's timeline -----------------------------------------------------------------

const FINAL_PHASES = ["done", "failed", "cancelled"];

/** The run's saves (`detail.checkpoints`), each shown once, at the point of the story it follows. */
function checkpointFeed(detail) {
  const left = [...(detail.checkpoints ?? [])];
  return (test) => {
    const taken = [];
    for (let index = 0; index < left.length; ) {
      if (test(left[index])) taken.push(...left.splice(index, 1));
      else index += 1;
    }
    return taken.map((checkpoint) => [
      "checkpoint",
      `Checkpoint: ${checkpoint.phase}`,
      h(
        "div",
        { className: "hint" },
        `saved at ${time(checkpoint.at)} · ${checkpoint.status} · iteration ${checkpoint.iteration}`,
      ),
    ]);
  };
}

/** A tool call's result: raw (before result middleware) and processed (as the model saw it). */
function toolResultItem(call, block) {
  const result = call?.result ?? { content: block.content, isError: block.isError };
  const title = `Tool result${result.isError ? " (error)" : ""}: ${call?.name ?? block.toolCallId}`;
  const kind = result.isError ? "error" : "tool";
  if (!call?.raw) {
    const why = call
      ? "No handler ran (denied or invalid)"
      : "Processed result, as the model saw it";
    return [kind, title, h("div", { className: "hint" }, why), h("pre", {}, result.content)];
  }
  if (call.raw.content === result.content && call.raw.isError === result.isError) {
    return [
      kind,
      title,
      h("div", { className: "hint" }, "Raw result, unchanged by result middleware"),
      h("pre", { className: "raw-result" }, result.content),
    ];
  }
  return [
    kind,
    title,
    h("div", { className: "hint" }, "Raw result, before result middleware"),
    h("pre", { className: "raw-result" }, call.raw.content),
    h("div", { className: "hint" }, "Processed result, as the model saw it"),
    h("pre", { className: "processed-result" }, result.content),
  ];
}

function timelineItems(detail, events, liveText) {
  const items = [];
  const asked = new Map();
  for (const event of events) {
    if (event.type === "approval_required")
      for (const call of event.pending) asked.set(call.toolCallId, call);
  }
  const decisions = new Map(detail.decisions.map((decision) => [decision.toolCallId, decision]));
  const modelCalls = new Map((detail.modelCalls ?? []).map((call) => [call.iteration, call]));
  const toolCalls = new Map(
    (detail.toolCalls ?? []).map((call) => [`${call.iteration}\u0000${call.toolCallId}`, call]),
  );
  const checkpoints = checkpointFeed(detail);
  items.push(...checkpoints((each) => each.iteration === 0));
  // The run's model turns are the conversation's last ones (an input may bring earlier turns);
  // at `afterLlm` the newest call's answer is saved but not yet in the conversation.
  const turns = detail.messages.filter((message) => message.role === "assistant").length;
  const answered = (detail.modelCalls ?? []).length - (detail.phase === "afterLlm" ? 1 : 0);
  const earlier = detail.modelCalls ? Math.max(0, turns - answered) : 0;
  let modelCall = -earlier;
  for (const message of detail.messages) {
    if (message.role === "user") {
      const text = message.content
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join("\n");
      items.push(["input", "Input", h("pre", {}, text)]);
    } else if (message.role === "assistant") {
      modelCall += 1;
      const iteration = modelCall;
      const info = modelCalls.get(iteration);
      const parts = [];
      if (info)
        parts.push(
          h(
            "div",
            { className: "usage" },
            `${info.model} · ${tokens(info.usage)} · ${info.durationMs} ms · ${info.stopReason}`,
          ),
        );
      for (const block of message.content) {
        if (block.type === "text") parts.push(h("pre", {}, block.text));
        if (block.type === "thinking")
          parts.push(h("details", {}, h("summary", {}, "Thinking"), h("pre", {}, block.text)));
        if (block.type === "tool_use")
          parts.push(
            h(
              "div",
              {},
              "Calls ",
              h("strong", {}, block.name),
              ` (${block.id})`,
              h("pre", {}, json(block.input)),
            ),
          );
      }
      items.push([
        "model",
        iteration > 0 ? `Model call ${iteration}` : "Earlier model turn (input)",
        parts,
      ]);
      items.push(
        ...checkpoints((each) => each.iteration === iteration && each.phase === "afterLlm"),
      );
      for (const block of message.content) {
        if (block.type !== "tool_use") continue;
        const ask = asked.get(block.id);
        if (ask)
          items.push([
            "approval",
            `Approval asked: ${block.name}`,
            h("div", {}, "Because: ", ask.reason),
          ]);
        const decision = decisions.get(block.id);
        if (decision) {
          items.push([
            "decision",
            `${decision.decision === "allow" ? "Approved" : "Denied"}: ${decision.name}`,
            h(
              "div",
              {},
              "By ",
              h("strong", {}, decision.by ?? "unknown"),
              ` at ${time(decision.at)}`,
            ),
            h("div", {}, "Reason: ", decision.reason ?? "(none)"),
          ]);
        }
      }
      items.push(
        ...checkpoints(
          (each) =>
            each.iteration === iteration &&
            (each.phase === "awaitingApproval" || each.phase === "dispatch"),
        ),
      );
    } else if (message.role === "tool") {
      for (const block of message.content) {
        if (block.type !== "tool_result") continue;
        items.push(toolResultItem(toolCalls.get(`${modelCall}\u0000${block.toolCallId}`), block));
      }
      items.push(
        ...checkpoints(
          (each) => each.iteration === modelCall && !FINAL_PHASES.includes(each.phase),
        ),
      );
    }
  }
  for (const [id, call] of asked) {
    if (!decisions.has(id) && detail.status === "awaiting_approval") {
      items.push([
        "approval",
        `Waiting for a person: ${call.name}`,
        h("div", {}, "Because: ", call.reason),
        h("pre", {}, json(call.input)),
      ]);
    }
  }
  const newest = detail.modelCalls?.at(-1);
  if (detail.phase === "afterLlm" && newest && newest.iteration > modelCall)
    items.push([
      "model",
      `Model call ${newest.iteration} answered (being processed)`,
      h("div", { className: "usage" }, `${newest.model} · ${tokens(newest.usage)}`),
    ]);
  if (liveText)
    items.push(["model", "Model is answering…", h("pre", { "aria-live": "polite" }, liveText)]);
  items.push(...checkpoints(() => true));
  if (detail.error)
    items.push(["error", `Error: ${detail.error.code}`, h("pre", {}, detail.error.message)]);
  if (["completed", "failed", "cancelled"].includes(detail.status))
    items.push(["result", `Run ${detail.status}`, `after ${detail.iterations} iteration(s)`]);
  return items;
}

function renderRun(detail, events, liveText) {
  $("run-title").textContent = `Run ${detail.runId}`;
  const field = (label, value, className) =>
    h("div", {}, h("span", {}, label), h("span", { className }, value));
  $("run-summary").replaceChildren(
    field("Agent", detail.agent),
    field("Status", detail.status, `status status-${detail.status}`),
    field("Phase (last checkpoint)", detail.phase),
    field("Iterations", String(detail.iterations)),
    field("Tokens", tokens(detail.usage)),
    field("Created", time(detail.createdAt)),
    field("Updated", time(detail.updatedAt)),
  );
  $("cancel").hidden = ["completed", "failed", "cancelled"].includes(detail.status);
  $("timeline").replaceChildren(
    ...timelineItems(detail, events, liveText).map(([kind, title, ...body]) =>
      h(
        "li",
        { className: `k-${kind}` },
        h("div", { className: "kind" }, kind),
        h("strong", {}, title),
        ...body,
      ),
    ),
  );
}

async function openRun(runId) {
  closeRun();
  const view = { runId, events: [], liveText: "", source: null, timer: null };
  state.openRun = view;
  const refresh = async () => {
    const detail = await api(`api/runs/${encodeURIComponent(runId)}`);
    if (state.openRun === view) renderRun(detail, view.events, view.liveText);
    return detail;
  };
  view.refresh = () => {
    clearTimeout(view.timer);
    view.timer = setTimeout(() => refresh().catch(() => {}), 120);
  };
  const page = await api(`api/runs/${encodeURIComponent(runId)}/events`);
  view.events = page.events;
  const detail = await refresh();
  if (["completed", "failed", "cancelled"].includes(detail.status)) return;
  // Follows the run live from where the page stopped; the session cookie authenticates it.
  const source = new EventSource(`api/runs/${encodeURIComponent(runId)}/events?after=${page.next}`);
  view.source = source;
  source.addEventListener("run_event", (message) => {
    const event = JSON.parse(message.data);
    if (event.type === "text_delta") view.liveText += event.text;
    else {
      view.events.push(event);
      if (event.type !== "tool_start") view.liveText = "";
    }
    view.refresh();
  });
  source.addEventListener("end", () => source.close());
}

function closeRun() {
  state.openRun?.source?.close();
  clearTimeout(state.openRun?.timer);
  state.openRun = null;
}

// ---- live status of every run -----------------------------------------------------------

function onRunChange(run) {
  if (matchesFilters(run)) state.runs.set(run.runId, run);
  else state.runs.delete(run.runId);
  renderRuns();
  for (const key of [...state.inbox.keys()])
    if (key.startsWith(`${run.runId}\u0000`)) state.inbox.delete(key);
  if (run.status === "awaiting_approval") {
    for (const call of run.pending) {
      const entry = { runId: run.runId, agent: run.agent, ...call, since: run.updatedAt };
      state.inbox.set(inboxKey(entry), entry);
    }
  }
  renderInbox();
  if (state.openRun?.runId === run.runId) state.openRun.refresh();
}

function connectStream() {
  state.stream?.close();
  const source = new EventSource("api/stream");
  state.stream = source;
  source.addEventListener("ready", () => {
    $("live").textContent = "live";
    $("live").classList.add("on");
    // Anything that changed while the stream was away is read again.
    loadInbox().catch(() => {});
  });
  source.addEventListener("run", (message) => onRunChange(JSON.parse(message.data)));
  source.addEventListener("error", () => {
    $("live").textContent = "reconnecting";
    $("live").classList.remove("on");
  });
}

// ---- views and keys ---------------------------------------------------------------------

function route() {
  if (!$("login").hidden) return;
  const hash = location.hash || "#inbox";
  const [view, ...rest] = hash.slice(1).split("/");
  for (const id of ["inbox", "runs", "run"]) $(id).hidden = id !== view;
  for (const id of ["inbox", "runs"]) {
    $(`nav-${id}`).toggleAttribute("aria-current", id === view);
    if (id === view) $(`nav-${id}`).setAttribute("aria-current", "page");
  }
  if (view === "run")
    openRun(decodeURIComponent(rest.join("/"))).catch((error) => toast(error.message));
  else closeRun();
  if (view === "runs") loadRuns().catch((error) => toast(error.message));
}

function moveSelection(by) {
  const count = state.inbox.size;
  if (count === 0) return;
  state.selected = (state.selected + by + count) % count;
  renderInbox();
  $("inbox-list").children[state.selected]?.scrollIntoView({ block: "nearest" });
}

document.addEventListener("keydown", (event) => {
  if ($("inbox").hidden || event.ctrlKey || event.metaKey || event.altKey) return;
  const inInput = event.target instanceof HTMLInputElement;
  const entry = sortedInbox()[state.selected];
  if (inInput) {
    if (event.key === "Escape") event.target.blur();
    if (event.key === "Enter" && entry) decideCall(entry, "allow", event.target.value);
    return;
  }
  const item = $("inbox-list").children[state.selected];
  if (event.key === "j") moveSelection(1);
  else if (event.key === "k") moveSelection(-1);
  else if (event.key === "a" && entry)
    decideCall(entry, "allow", item?.querySelector("input")?.value ?? "");
  else if (event.key === "d" && entry)
    decideCall(entry, "deny", item?.querySelector("input")?.value ?? "");
  else if (event.key === "r" && item) item.querySelector("input")?.focus();
  else if (event.key === "o" && entry) location.hash = `#run/${encodeURIComponent(entry.runId)}`;
  else return;
  event.preventDefault();
});

async function start() {
  const who = await api("api/whoami");
  $("who").textContent = who.name ? `signed in as ${who.name}` : "reading without a token";
  $("nav-queues").hidden = !state.config.queues;
  await loadInbox();
  connectStream();
  route();
  setInterval(() => {
    for (const element of document.querySelectorAll("[data-since]")) {
      element.textContent = `waiting ${waited(Number(element.dataset.since))}`;
    }
  }, 1000);
}

$("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  signIn($("token").value.trim());
});
$("filters").addEventListener("submit", (event) => {
  event.preventDefault();
  state.filters = Object.fromEntries(new FormData(event.target));
  loadRuns().catch((error) => toast(error.message));
});
$("more").addEventListener("click", () =>
  loadRuns({ more: true }).catch((error) => toast(error.message)),
);
$("cancel").addEventListener("click", async () => {
  const runId = state.openRun?.runId;
  if (!runId) return;
  try {
    await api(`api/runs/${encodeURIComponent(runId)}/cancel`, { method: "POST", body: {} });
    toast("Cancel requested");
  } catch (error) {
    toast(error.message);
  }
});
window.addEventListener("hashchange", route);

state.config = await fetch("config.json").then((response) => response.json());
if (state.token) await signIn(state.token);
else if (state.config.readOpen) await start().catch(() => showLogin());
else showLogin();
