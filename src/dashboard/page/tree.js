// Runs of runs (SPEC §12.1 "Run trees"): links from a run to its parent, its children and the
// list of its whole tree, and the route that lists one tree (`#runs/root/<rootRunId>`).
import { h } from "./dom.js";

const runHref = (runId) => `#run/${encodeURIComponent(runId)}`;

/** The runs view of the tree whose root is `rootRunId`. */
export const treeHref = (rootRunId) => `#runs/root/${encodeURIComponent(rootRunId)}`;

/** The root of the tree `run` belongs to: its own id when it is a root with children. */
export function rootOf(run) {
  if (run.rootRunId) return run.rootRunId;
  return run.children?.length ? run.runId : null;
}

/** The rootRunId a runs route names (`#runs/root/<id>` gives its parts after "runs"). */
export const rootOfRoute = (parts) =>
  parts[0] === "root" && parts.length > 1 ? decodeURIComponent(parts.slice(1).join("/")) : null;

/** The summary fields of a run's place in its tree: `field(label, value, className)` each. */
export function treeFields(detail, field) {
  const fields = [];
  if (detail.parentRunId) {
    fields.push(
      field(
        "Parent",
        h(
          "span",
          { className: "tree-parent" },
          h("a", { href: runHref(detail.parentRunId) }, detail.parentRunId),
          detail.parentToolCallId ? ` · call ${detail.parentToolCallId}` : null,
        ),
        "mono",
      ),
    );
  }
  const children = detail.children ?? [];
  if (children.length > 0) {
    const links = children.map((child) =>
      h(
        "li",
        {},
        h("a", { href: runHref(child.runId) }, child.runId),
        ` · ${child.agent} (call ${child.parentToolCallId})`,
      ),
    );
    fields.push(field("Children", h("ul", { className: "tree-children" }, links), "mono"));
  }
  const root = rootOf(detail);
  if (root) {
    fields.push(
      field(
        "Tree",
        h("a", { href: treeHref(root), className: "tree-link" }, "every run of this tree"),
      ),
    );
  }
  return fields;
}

/** An inbox card's link to the tree of a child run's call (§14 "Approvals at any depth"). */
export function inboxTreeLink(entry) {
  if (!entry.rootRunId || entry.rootRunId === entry.runId) return null;
  return h(
    "a",
    {
      href: treeHref(entry.rootRunId),
      className: "tree-link",
      title: `Runs of the tree ${entry.rootRunId}`,
    },
    "tree ",
    entry.rootRunId.slice(0, 8),
  );
}

/** A runs row's link to its tree, for a run that belongs to one. */
export function treeCellLink(run) {
  const root = rootOf(run);
  if (!root) return null;
  return [
    " ",
    h(
      "a",
      { href: treeHref(root), className: "tree-link", title: `Runs of the tree ${root}` },
      "tree",
    ),
  ];
}
