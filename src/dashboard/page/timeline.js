// One run's story as timeline items: its inputs, model calls with their tokens, approvals and
// decisions, tool calls (running, raw and processed results), the saves between them, and how
// it ended. Each item is [kind, title, ...body].
import { dateTime, duration, FINISHED, h, json, tokens } from "./dom.js";

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
        `saved ${dateTime(checkpoint.at)} · ${checkpoint.status} · iteration ${checkpoint.iteration}`,
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

/** Calls dispatched and not answered yet: how long each has run, from its dispatch save. */
function runningCalls(detail) {
  if (detail.status !== "running") return [];
  return (detail.toolCalls ?? [])
    .filter((call) => call.result === null && call.raw === null)
    .flatMap((call) => {
      const dispatched = (detail.checkpoints ?? []).findLast(
        (each) => each.iteration === call.iteration && each.phase === "dispatch",
      );
      if (!dispatched) return [];
      return [
        [
          "running",
          `Running: ${call.name}`,
          h(
            "div",
            {
              className: "elapsed",
              "data-elapsed-since": dispatched.at,
              "data-elapsed-prefix": "running for ",
            },
            `running for ${duration(Date.now() - dispatched.at)}`,
          ),
          h("pre", {}, json(call.input)),
        ],
      ];
    });
}

/**
 * The items of a run's timeline. `controls(call)` gives the decide controls of a call still
 * waiting for a person.
 */
const DECIDED = { allow: "Approved", deny: "Denied", respond: "Answered" };

/** A call waits while nobody decided it, or while its quorum is short of approvals. */
const stillWaiting = (call, decision) =>
  decision === undefined ||
  (decision.decision === "allow" &&
    call.approvals !== undefined &&
    call.approvals.given.length < call.approvals.needed);

export function timelineItems(detail, events, liveText, controls) {
  const items = [];
  const asked = new Map();
  for (const event of events) {
    if (event.type === "approval_required")
      for (const call of event.pending) asked.set(call.toolCallId, call);
  }
  // The run's own pending list last: it says who has approved a quorum call so far.
  for (const call of detail.pending ?? []) asked.set(call.toolCallId, call);
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
            `${info.model} · ${tokens(info.usage)} · ${duration(info.durationMs)} · ${info.stopReason}`,
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
        const decision = decisions.get(block.id);
        if (ask)
          items.push([
            "approval",
            `Approval asked: ${block.name}`,
            h("div", {}, "Because: ", ask.reason),
          ]);
        if (decision) {
          items.push([
            "decision",
            `${DECIDED[decision.decision] ?? "Decided"}: ${decision.name}`,
            h(
              "div",
              {},
              "By ",
              h("strong", {}, decision.by ?? "unknown"),
              ` at ${dateTime(decision.at)}`,
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
    if (stillWaiting(call, decisions.get(id)) && detail.status === "awaiting_approval") {
      items.push([
        "approval",
        `Waiting for a person: ${call.name}`,
        h("div", {}, "Because: ", call.reason),
        h("pre", {}, json(call.input)),
        controls({ ...call, runId: detail.runId, agent: detail.agent, since: detail.updatedAt }),
      ]);
    }
  }
  items.push(...runningCalls(detail));
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
  if (FINISHED.includes(detail.status)) {
    const failedCalls = failedToolCalls(detail);
    items.push([
      detail.status === "completed" ? (failedCalls > 0 ? "flagged" : "result") : "failed",
      `Run ${detail.status}`,
      h(
        "div",
        {},
        `after ${detail.iterations} iteration(s) in ${duration(detail.updatedAt - detail.createdAt)}`,
      ),
      failedCalls > 0 && detail.status === "completed"
        ? h("div", { className: "flag" }, `${failedCalls} tool call(s) failed on the way`)
        : null,
    ]);
  }
  return items;
}

/** Tool calls whose result (as the model saw it) was an error. */
export const failedToolCalls = (detail) =>
  (detail.toolCalls ?? []).filter((call) => call.result?.isError === true).length;
