import { globToRegExp } from "../permissions/glob.js";

/**
 * What a scoped token may decide (SPEC §7.1 "Who may decide"): calls of tools whose names match
 * one of `tools`, in runs of agents whose names match one of `agents` (globs: `*`, `?`). A list
 * left out allows any; an empty list allows none.
 */
export interface TokenScope {
  tools?: readonly string[] | undefined;
  agents?: readonly string[] | undefined;
}

/** A dashboard token entry: the bearer token alone (decides anything), or with its scope. */
export type TokenEntry = string | ({ token: string } & TokenScope);

/** A scope with its globs compiled, as the dashboard checks it on every decision. */
export class DecisionScope {
  readonly globs: TokenScope;
  readonly #tools: readonly RegExp[] | undefined;
  readonly #agents: readonly RegExp[] | undefined;

  constructor(scope: TokenScope) {
    this.globs = scope;
    this.#tools = scope.tools?.map(globToRegExp);
    this.#agents = scope.agents?.map(globToRegExp);
  }

  /** Whether a call of `tool` in a run of `agent` is this scope's to decide. */
  allows(agent: string, tool: string): boolean {
    return this.allowsAgent(agent) && matchesAny(this.#tools, tool);
  }

  /** Whether runs of `agent` are in this scope (some of their tools may still be out). */
  allowsAgent(agent: string): boolean {
    return matchesAny(this.#agents, agent);
  }
}

const matchesAny = (patterns: readonly RegExp[] | undefined, name: string): boolean =>
  patterns === undefined || patterns.some((pattern) => pattern.test(name));

/** The bearer token of an entry and its scope (none for a plain token or one without lists). */
export function splitEntry(entry: TokenEntry): { token: string; scope?: DecisionScope } {
  if (typeof entry === "string") return { token: entry };
  const { token, tools, agents } = entry;
  if (tools === undefined && agents === undefined) return { token };
  return {
    token,
    scope: new DecisionScope({
      ...(tools === undefined ? {} : { tools }),
      ...(agents === undefined ? {} : { agents }),
    }),
  };
}
