// One run: its summary, its timeline followed live (from the first streamed delta), the decide
// controls of a call waiting for a person, and a cancel that asks first.

import { decideForms, quorumLine } from "./decide-forms.js";
import {
  $,
  api,
  duration,
  FINISHED,
  failureOf,
  h,
  refreshElapsed,
  timeElement,
  toast,
  tokens,
} from "./dom.js";
import { decideCall } from "./inbox.js";
import { failedToolCalls, timelineItems } from "./timeline.js";
import { treeFields } from "./tree.js";

const EVENT_PAGE = 1000;

let open = null; // { runId, events, liveText, source, timer, detail, reasons, failures, refresh }

/** A waiting call's controls in the timeline: a reason, Approve and Deny, and why one failed. */
function decideControls(view) {
  return (entry) => {
    const reason = h("input", {
      className: "reason",
      placeholder: "Reason (optional)",
      autocomplete: "off",
      "aria-label": `Reason for ${entry.name}`,
      oninput: (event) => view.reasons.set(entry.toolCallId, event.target.value),
    });
    reason.value = view.reasons.get(entry.toolCallId) ?? "";
    const failure = view.failures.get(entry.toolCallId);
    const send = async (decision, extra) => {
      const failed = await decideCall(entry, decision, reason.value, extra);
      if (failed && failed.code !== "already_decided") {
        view.failures.set(entry.toolCallId, failed.message);
      } else view.failures.delete(entry.toolCallId);
      view.refresh();
    };
    const decide = (decision) => () => send(decision);
    return h(
      "div",
      { className: "decide" },
      quorumLine(entry),
      reason,
      h("button", { type: "button", className: "approve", onclick: decide("allow") }, "Approve"),
      h("button", { type: "button", className: "deny", onclick: decide("deny") }, "Deny"),
      ...decideForms(entry, send),
      failure
        ? h("p", { className: "card-error error", role: "alert" }, `Not decided: ${failure}`)
        : null,
    );
  };
}

function renderRun(view) {
  const { detail } = view;
  $("run-title").textContent = `Run ${detail.runId}`;
  const field = (label, value, className, attributes = {}) =>
    h("div", {}, h("span", {}, label), h("span", { className, ...attributes }, value));
  const failedCalls = failedToolCalls(detail);
  const finished = FINISHED.includes(detail.status);
  $("run-summary").className = `summary summary-${detail.status}`;
  const fields = [
    field("Agent", detail.agent),
    field("Status", detail.status, `status status-${detail.status}`),
    detail.error ? field("Error", detail.error.code, "status status-failed") : null,
    detail.cancelledBy ? field("Cancelled by", detail.cancelledBy) : null,
    failedCalls > 0 ? field("Tool errors", `${failedCalls} tool call(s) failed`, "flag") : null,
    field("Phase (last checkpoint)", detail.phase),
    field("Iterations", String(detail.iterations)),
    field("Tokens", tokens(detail.usage)),
    field("Created", timeElement(detail.createdAt)),
    field("Updated", timeElement(detail.updatedAt)),
    field(
      finished ? "Took" : "Running for",
      duration((finished ? detail.updatedAt : Date.now()) - detail.createdAt),
      undefined,
      finished ? {} : { "data-elapsed-since": detail.createdAt },
    ),
    field("Session", detail.sessionId, "mono"),
    ...treeFields(detail, field),
  ].filter(Boolean);
  $("run-summary").replaceChildren(...fields);
  $("cancel").hidden = finished;
  if (finished) $("cancel-confirm").hidden = true;
  $("timeline").replaceChildren(
    ...timelineItems(detail, view.events, view.liveText, decideControls(view)).map(
      ([kind, title, ...body]) =>
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

/** The text streamed since the last event that was not a delta: what the model is saying now. */
function liveTextOf(events) {
  let text = "";
  for (const event of events) {
    if (event.type === "text_delta") text += event.text;
    else if (event.type !== "tool_start") text = "";
  }
  return text;
}

/** Opens `runId`: reads every event so far (the deltas streamed before too), then follows it. */
export async function openRun(runId) {
  closeRun();
  const view = {
    runId,
    events: [],
    liveText: "",
    source: null,
    timer: null,
    detail: null,
    reasons: new Map(),
    failures: new Map(),
  };
  open = view;
  const refresh = async () => {
    const detail = await api(`api/runs/${encodeURIComponent(runId)}`);
    if (open !== view) return detail;
    view.detail = detail;
    renderRun(view);
    return detail;
  };
  view.refresh = () => {
    clearTimeout(view.timer);
    view.timer = setTimeout(() => refresh().catch(() => {}), 120);
  };
  let next = 0;
  for (;;) {
    const page = await api(
      `api/runs/${encodeURIComponent(runId)}/events?after=${next}&limit=${EVENT_PAGE}`,
    );
    view.events.push(...page.events);
    next = page.next;
    if (page.events.length < EVENT_PAGE) break;
  }
  view.liveText = liveTextOf(view.events);
  const detail = await refresh();
  if (open !== view || FINISHED.includes(detail.status)) return;
  // Follows the run live from where the pages stopped; the session cookie authenticates it.
  const source = new EventSource(`api/runs/${encodeURIComponent(runId)}/events?after=${next}`);
  view.source = source;
  source.addEventListener("run_event", (message) => {
    const event = JSON.parse(message.data);
    view.events.push(event);
    if (event.type === "text_delta") view.liveText += event.text;
    else if (event.type !== "tool_start") view.liveText = "";
    view.refresh();
  });
  source.addEventListener("end", () => source.close());
}

export function closeRun() {
  open?.source?.close();
  clearTimeout(open?.timer);
  open = null;
  $("cancel-confirm").hidden = true;
}

/** Run status changes from the live stream: the open run reads itself again. */
export function applyRunChanges(runs) {
  if (open && runs.some((run) => run.runId === open.runId)) open.refresh();
}

/** Keeps the open run's running durations current. */
export function tickRun() {
  if (open && !$("run").hidden) refreshElapsed($("run"));
}

export function initRunView() {
  $("cancel").addEventListener("click", () => {
    $("cancel-confirm").hidden = false;
    $("cancel-yes").focus();
  });
  $("cancel-no").addEventListener("click", () => {
    $("cancel-confirm").hidden = true;
    $("cancel").focus();
  });
  $("cancel-yes").addEventListener("click", async () => {
    const runId = open?.runId;
    if (!runId) return;
    $("cancel-confirm").hidden = true;
    try {
      await api(`api/runs/${encodeURIComponent(runId)}/cancel`, { method: "POST", body: {} });
      toast("Cancel requested");
    } catch (error) {
      toast(`Not cancelled: ${failureOf(error)}`);
    }
  });
}
