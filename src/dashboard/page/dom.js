// What every view of the page shares: elements, the API client, the toast, and how dates,
// durations and tokens read. Every piece of data enters the page as text, never as HTML.

export const TOKEN_KEY = "harnessx-token";
export const $ = (id) => document.getElementById(id);

/** An element with attributes and children; strings become text nodes. */
export function h(tag, attributes = {}, ...children) {
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

/** What the page knows across views. */
export const session = {
  token: sessionStorage.getItem(TOKEN_KEY),
  config: { queues: false, readOpen: false },
  /** Called on a 401: the page shows its sign-in form. */
  onUnauthorized: () => {},
};

export class HttpError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code;
  }
}

/** A JSON request to the dashboard's API; throws `HttpError` on an error status. */
export async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const parsed = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401) session.onUnauthorized();
    throw new HttpError(response.status, parsed);
  }
  return parsed;
}

/** Why a request failed, in words a person can act on. */
export function failureOf(error) {
  if (error instanceof HttpError) {
    if (error.status === 401) return "not signed in (401): sign in again";
    return `${error.message} (${error.status}${error.code ? ` ${error.code}` : ""})`;
  }
  return `the dashboard did not answer (${error?.message ?? "network error"})`;
}

export function toast(text) {
  const element = $("toast");
  element.textContent = text;
  element.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => element.classList.remove("show"), 3000);
}

const pad = (value) => String(value).padStart(2, "0");

/** A date and time, such as `2026-12-06 05:11:03` (local time). */
export function dateTime(ms) {
  const at = new Date(ms);
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
}

/** A `<time>` element: the date and time, its ISO form for machines and a title. */
export function timeElement(ms) {
  const iso = new Date(ms).toISOString();
  return h("time", { datetime: iso, title: iso }, dateTime(ms));
}

/** A duration, such as `850 ms`, `24.1 s`, `3 min 12 s` or `2 h 5 min`. */
export function duration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return "?";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/**
 * Sets an element's text only when it differs: writing the same text still replaces the text
 * node, and so costs a style and layout pass.
 */
export function setText(element, text) {
  if (element.textContent !== text) element.textContent = text;
}

/**
 * Makes `nodes` the children of `parent`, in order, moving only what changed: a node already in
 * place stays attached (no style or layout work of its own), one card leaving costs one removal.
 */
export function placeChildren(parent, nodes) {
  const wanted = new Set(nodes);
  for (const child of [...parent.children]) if (!wanted.has(child)) child.remove();
  for (const [index, node] of nodes.entries()) {
    const current = parent.children[index];
    if (current !== node) parent.insertBefore(node, current ?? null);
  }
}

/**
 * A run id, short: its first 8 characters, and for a child run the part after its tree's root
 * (`677a4f77.research_1`), since a child's id starts with its root's.
 */
export function shortRunId(runId, rootRunId) {
  const tail = rootRunId && runId.startsWith(rootRunId) ? runId.slice(rootRunId.length) : "";
  return `${runId.slice(0, 8)}${tail}`;
}

export const json = (value) => JSON.stringify(value, null, 2);
export const tokens = (usage) =>
  `${usage.inputTokens} in · ${usage.outputTokens} out · ${usage.cacheReadTokens} cache read · ${usage.cacheWriteTokens} cache write`;
export const FINISHED = ["completed", "failed", "cancelled"];

/** Calls `render` once in the next frame however often it is asked for before then. */
export function perFrame(render) {
  let asked = false;
  return () => {
    if (asked) return;
    asked = true;
    requestAnimationFrame(() => {
      asked = false;
      render();
    });
  };
}

/** Elements with `data-elapsed-since` read "<prefix> <duration>" and are kept current. */
export function refreshElapsed(root = document) {
  const now = Date.now();
  for (const element of root.querySelectorAll("[data-elapsed-since]")) {
    element.textContent = `${element.dataset.elapsedPrefix ?? ""}${duration(now - Number(element.dataset.elapsedSince))}`;
  }
}
