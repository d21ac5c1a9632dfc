// The decision forms beyond approve and deny (SPEC §7.1), for an inbox card and a waiting run's
// timeline alike: a quorum's given/needed, edit-and-approve (a JSON editor of the call's input)
// and respond (the call's result, typed by the person). `decide(decision, extra)` sends one.
import { h, json } from "./dom.js";

/** "Approvals 1/2: alice" for a call that needs more than one person, else nothing. */
export function quorumLine(entry) {
  const quorum = entry.approvals;
  if (!quorum) return null;
  const names = quorum.given.map((each) => each.by).join(", ");
  return h(
    "div",
    { className: "quorum", "aria-label": "Approvals" },
    `Approvals ${quorum.given.length}/${quorum.needed}`,
    names ? `: ${names}` : " (distinct people)",
  );
}

/**
 * The edit-and-approve and respond forms, folded (`<details>`): each checks what it can here
 * (the edit must be a JSON object) and leaves the rest to the server, whose refusal the card
 * shows as any failed decision.
 */
export function decideForms(entry, decide) {
  const editor = h("textarea", {
    className: "edit-input",
    rows: 4,
    spellcheck: "false",
    "aria-label": `Edited input of ${entry.name}`,
  });
  editor.value = json(entry.input);
  const editError = h("p", { className: "error", role: "alert", hidden: true });
  const approveEdited = () => {
    let input;
    try {
      input = JSON.parse(editor.value);
    } catch (error) {
      input = error;
    }
    const ok = typeof input === "object" && input !== null && !Array.isArray(input);
    editError.hidden = ok;
    editError.textContent = ok ? "" : "The edit must be a JSON object.";
    if (ok) decide("allow", { input });
  };
  const answer = h("textarea", {
    className: "respond-content",
    rows: 3,
    "aria-label": `Response to ${entry.name}`,
    placeholder: "The call's result, as the model will read it",
  });
  const asError = h("input", { type: "checkbox", className: "respond-error" });
  const respond = () => decide("respond", { content: answer.value, isError: asError.checked });
  return [
    h(
      "details",
      { className: "edit" },
      h("summary", {}, "Edit and approve"),
      editor,
      editError,
      h(
        "button",
        { type: "button", className: "approve approve-edited", onclick: approveEdited },
        "Approve edited",
      ),
    ),
    h(
      "details",
      { className: "respond" },
      h("summary", {}, "Respond instead"),
      answer,
      h("label", {}, asError, " tell the model it failed"),
      h(
        "button",
        { type: "button", className: "send-response", onclick: respond },
        "Send response",
      ),
    ),
  ];
}

/** The path of a decision on `entry`. */
export const decisionPath = (entry, decision) =>
  `api/runs/${encodeURIComponent(entry.runId)}/calls/${encodeURIComponent(entry.toolCallId)}/${
    { allow: "approve", deny: "deny", respond: "respond" }[decision]
  }`;

/** A quorum approval that others must still join: the call keeps waiting after it. */
export const joinsQuorum = (entry, decision) =>
  decision === "allow" &&
  entry.approvals !== undefined &&
  entry.approvals.given.length + 1 < entry.approvals.needed;
