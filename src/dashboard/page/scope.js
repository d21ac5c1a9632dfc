// What the signed-in token may decide (a scoped token: tool and agent globs, from whoami): the
// inbox keeps only those calls, including the ones the live stream brings. No scope: anything.

let scope = null;

const globToRegExp = (glob) =>
  new RegExp(
    `^${glob
      .split("")
      .map((char) => {
        if (char === "*") return ".*";
        if (char === "?") return ".";
        return char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
      })
      .join("")}$`,
  );

const compile = (globs) => (Array.isArray(globs) ? globs.map(globToRegExp) : null);

/** Sets the scope whoami answered (`undefined` for a token that may decide anything). */
export function setDecisionScope(globs) {
  scope = globs ? { tools: compile(globs.tools), agents: compile(globs.agents) } : null;
}

const matchesAny = (patterns, name) => !patterns || patterns.some((pattern) => pattern.test(name));

/** Whether the signed-in token may decide `entry` (a waiting call: its agent and tool name). */
export const mayDecide = (entry) =>
  !scope || (matchesAny(scope.agents, entry.agent) && matchesAny(scope.tools, entry.name));
