// The harnessx dashboard page: plain ES modules, no framework, no build step. This module signs
// in and out, routes between the views, and feeds them the live stream of run changes, a batch
// per frame: a burst of thousands of runs costs each view one bounded draw per frame.
import { $, api, session, TOKEN_KEY, toast } from "./dom.js";
import * as inbox from "./inbox.js";
import * as overview from "./overview.js";
import * as runView from "./run-view.js";
import * as runs from "./runs.js";
import { setDecisionScope } from "./scope.js";
import { rootOfRoute } from "./tree.js";

const VIEWS = ["overview", "inbox", "runs", "run"];
let stream = null;
let ticker = null;
let pending = new Map(); // runId → its newest summary from the stream, not handed out yet

// ---- signing in and out -------------------------------------------------------------------

function showLogin(message = "") {
  for (const id of VIEWS) $(id).hidden = true;
  $("login").hidden = false;
  $("sign-out").hidden = true;
  $("login-error").textContent = message;
  $("token").focus();
}
session.onUnauthorized = () => showLogin("Signed out: sign in again.");

async function signIn(token) {
  session.token = token;
  try {
    await api("api/session", { method: "POST" }); // the cookie lets EventSource streams read
    sessionStorage.setItem(TOKEN_KEY, token);
    $("login").hidden = true;
    await start();
  } catch (error) {
    session.token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(error.status === 401 ? "That token is not known here." : error.message);
  }
}

async function signOut() {
  stream?.close();
  stream = null;
  clearInterval(ticker);
  runView.closeRun();
  await api("api/session", { method: "DELETE" }).catch(() => {});
  session.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  inbox.resetInbox();
  $("who").textContent = "";
  $("live").textContent = "offline";
  $("live").classList.remove("on");
  showLogin("Signed out.");
}

// ---- the live stream of run changes -------------------------------------------------------

function flush() {
  const batch = [...pending.values()];
  pending = new Map();
  inbox.applyRunChanges(batch);
  runs.applyRunChanges(batch);
  runView.applyRunChanges(batch);
}

function connectStream() {
  stream?.close();
  const source = new EventSource("api/stream");
  stream = source;
  let asked = false;
  source.addEventListener("ready", () => {
    $("live").textContent = "live";
    $("live").classList.add("on");
    // Anything that changed while the stream was away is read again.
    inbox.loadInbox().catch(() => {});
  });
  source.addEventListener("run", (message) => {
    const run = JSON.parse(message.data);
    pending.set(run.runId, run);
    if (asked) return;
    asked = true;
    requestAnimationFrame(() => {
      asked = false;
      flush();
    });
  });
  source.addEventListener("error", () => {
    $("live").textContent = "reconnecting";
    $("live").classList.remove("on");
  });
}

// ---- views and keys -----------------------------------------------------------------------

function route() {
  if (!$("login").hidden) return;
  const hash = location.hash || "#inbox";
  const [view, ...rest] = hash.slice(1).split("/");
  for (const id of VIEWS) $(id).hidden = id !== view;
  for (const id of ["overview", "inbox", "runs"]) {
    if (id === view) $(`nav-${id}`).setAttribute("aria-current", "page");
    else $(`nav-${id}`).removeAttribute("aria-current");
  }
  if (view === "run")
    runView.openRun(decodeURIComponent(rest.join("/"))).catch((error) => toast(error.message));
  else runView.closeRun();
  if (view === "runs") {
    const root = rootOfRoute(rest);
    if (root) runs.showTree(root);
    runs.loadRuns().catch((error) => toast(error.message));
  }
  if (view === "inbox") inbox.renderInbox();
  if (view === "overview") overview.loadOverview().catch((error) => toast(error.message));
}

document.addEventListener("keydown", (event) => {
  if ($("inbox").hidden || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  const entry = inbox.selectedEntry();
  // Typing in a field (an edit or a response too) is text, never a shortcut.
  const typing =
    (target instanceof HTMLInputElement && target.type !== "checkbox") ||
    target instanceof HTMLTextAreaElement;
  if (typing) {
    if (event.key === "Escape") target.blur();
    if (event.key === "Enter" && target.classList.contains("reason")) {
      const card = target.closest("li[data-key]");
      const own = card && inbox.selectedCard() === card ? entry : undefined;
      if (own) void inbox.decideCall(own, "allow", target.value);
    }
    return;
  }
  const card = inbox.selectedCard();
  const reason = () => card?.querySelector("input.reason")?.value ?? "";
  if (event.key === "j") inbox.moveSelection(1);
  else if (event.key === "k") inbox.moveSelection(-1);
  else if (event.key === "a" && entry) void inbox.decideCall(entry, "allow", reason());
  else if (event.key === "d" && entry) void inbox.decideCall(entry, "deny", reason());
  else if (event.key === "r" && card) card.querySelector("input.reason")?.focus();
  else if (event.key === "x" && card) inbox.toggleSelected();
  else if (event.key === "o" && entry) location.hash = `#run/${encodeURIComponent(entry.runId)}`;
  else return;
  event.preventDefault();
});

async function start() {
  const who = await api("api/whoami");
  setDecisionScope(who.scope);
  $("who").textContent = who.name ? `signed in as ${who.name}` : "reading without a token";
  $("sign-out").hidden = !session.token;
  $("nav-queues").hidden = !session.config.queues;
  await inbox.loadInbox();
  connectStream();
  route();
  clearInterval(ticker);
  ticker = setInterval(() => {
    if (!$("inbox").hidden) inbox.tickInbox();
    runs.tickRuns();
    runView.tickRun();
  }, 1000);
}

$("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  void signIn($("token").value.trim());
});
$("sign-out").addEventListener("click", () => void signOut());
inbox.initInbox();
overview.initOverview();
runs.initRuns();
runView.initRunView();
window.addEventListener("hashchange", route);

session.config = await fetch("config.json").then((response) => response.json());
if (session.token) await signIn(session.token);
else if (session.config.readOpen) await start().catch(() => showLogin());
else showLogin();
