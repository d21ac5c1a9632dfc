import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import { Registration } from "../core/registration.js";
import { defaultDecisionReason, type ToolCall } from "../core/values.js";
import { describeIssues } from "../tools/validate.js";
import { globToRegExp } from "./glob.js";

export type PermissionDecision = "allow" | "deny" | "ask";

/** A rule: for calls of `tool` (exact name or glob) that satisfy `when`, decide `decision`. */
export interface PermissionRule {
  /** A tool name, or a glob where `*` matches any run of characters and `?` one character. */
  tool: string;
  /** Narrows the rule to calls whose input satisfies it. A predicate that throws denies. */
  when?: (call: ToolCall) => boolean;
  decision: PermissionDecision;
  /** Shown to reviewers and in error results. */
  reason?: string;
  /**
   * With `decision: "ask"`: how many distinct people must approve (a quorum; one deny denies).
   * @defaultValue 1
   */
  approvals?: number;
}

/** What the policy says of one call, and why. */
export interface PermissionVerdict {
  decision: PermissionDecision;
  reason: string;
  /** With `ask`: how many distinct people must approve (absent: one). */
  approvals?: number;
}

/** Replaces rule evaluation entirely. */
export type PermissionResolver = (
  call: ToolCall,
) => PermissionDecision | PermissionVerdict | Promise<PermissionDecision | PermissionVerdict>;

export interface PermissionManagerOptions {
  /**
   * The decision for calls no rule matches.
   * @defaultValue "allow"
   */
  default?: PermissionDecision;
  rules?: readonly PermissionRule[];
  /** A custom resolver; when given, `rules` and `default` are not consulted. */
  resolver?: PermissionResolver;
}

const Decision = lazySchema(() => z.enum(["allow", "deny", "ask"]));
const Rule = lazySchema(() =>
  z.object({
    tool: z.string().min(1),
    when: z.function().optional(),
    decision: Decision,
    reason: z.string().optional(),
    approvals: z.number().int().min(1).max(100).optional(),
  }),
);
const Options = lazySchema(() =>
  z.object({
    default: Decision.optional(),
    rules: z.array(Rule).optional(),
    resolver: z.function().optional(),
  }),
);

// deny beats ask beats allow: a more specific rule never quietly overrides a stricter one.
const STRICTNESS: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 };

interface CompiledRule {
  rule: PermissionRule;
  pattern: RegExp;
}

/**
 * The enforcement boundary for tool calls. Every matching rule is considered and the strictest
 * decision wins (deny, then ask, then allow); when none matches, `default` applies.
 * @example
 * new PermissionManager({
 *   default: "allow",
 *   rules: [{ tool: "delete_*", decision: "ask" }, { tool: "shell", decision: "deny" }],
 * });
 */
export class PermissionManager {
  readonly #default: PermissionDecision;
  readonly #resolver: PermissionResolver | undefined;
  #rules: readonly CompiledRule[] = [];

  constructor(options: PermissionManagerOptions = {}) {
    const parsed = Options.safeParse(options);
    if (!parsed.success) {
      throw new ConfigError(
        `Invalid PermissionManager options: ${describeIssues(parsed.error.issues)}`,
      );
    }
    this.#default = options.default ?? "allow";
    this.#resolver = options.resolver;
    for (const rule of options.rules ?? []) this.addRule(rule);
  }

  /** Adds a rule, in force for every later check (including re-checks of parked runs). */
  addRule(rule: PermissionRule): Registration {
    const parsed = Rule.safeParse(rule);
    if (!parsed.success) {
      throw new ConfigError(`Invalid permission rule: ${describeIssues(parsed.error.issues)}`);
    }
    const compiled = { rule, pattern: globToRegExp(rule.tool) };
    this.#rules = [...this.#rules, compiled];
    return new Registration(() => this.removeRule(rule));
  }

  /** Removes a rule added earlier; false when it was not there. */
  removeRule(rule: PermissionRule): boolean {
    const index = this.#rules.findIndex((each) => each.rule === rule);
    if (index < 0) return false;
    this.#rules = this.#rules.toSpliced(index, 1);
    return true;
  }

  get rules(): readonly PermissionRule[] {
    return this.#rules.map((each) => each.rule);
  }

  /** The policy's verdict on `call` as it stands now. */
  async resolve(call: ToolCall): Promise<PermissionVerdict> {
    if (this.#resolver) {
      try {
        return normalise(await this.#resolver(call), "custom resolver");
      } catch (error) {
        // Fail closed, as a throwing `when` predicate does.
        const message = error instanceof Error ? error.message : String(error);
        return { decision: "deny", reason: `custom resolver failed: ${message}` };
      }
    }
    let verdict: PermissionVerdict | undefined;
    for (const { rule, pattern } of this.#rules) {
      if (!pattern.test(call.name)) continue;
      let applies: boolean;
      try {
        applies = rule.when === undefined || rule.when(call);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return { decision: "deny", reason: `rule for "${rule.tool}" failed: ${message}` };
      }
      if (!applies) continue;
      if (verdict === undefined || STRICTNESS[rule.decision] > STRICTNESS[verdict.decision]) {
        verdict = {
          decision: rule.decision,
          reason: rule.reason ?? `rule "${rule.tool}": ${rule.decision}`,
          ...quorumOf(rule),
        };
      } else if (rule.decision === "ask" && verdict.decision === "ask") {
        // Two ask rules: the larger quorum holds.
        const needed = Math.max(verdict.approvals ?? 1, rule.approvals ?? 1);
        if (needed > 1) verdict = { ...verdict, approvals: needed };
      }
    }
    return verdict ?? { decision: this.#default, reason: defaultDecisionReason(this.#default) };
  }
}

const quorumOf = (rule: PermissionRule): { approvals?: number } =>
  rule.decision === "ask" && (rule.approvals ?? 1) > 1 ? { approvals: rule.approvals ?? 1 } : {};

function normalise(
  value: PermissionDecision | PermissionVerdict,
  source: string,
): PermissionVerdict {
  const verdict =
    typeof value === "string" ? { decision: value, reason: `${source}: ${value}` } : value;
  // Fail closed: anything but a known decision (even a missing return value) denies.
  if (
    typeof verdict !== "object" ||
    verdict === null ||
    !Decision.safeParse(verdict.decision).success
  ) {
    return { decision: "deny", reason: `${source} returned an unknown decision` };
  }
  const { approvals } = verdict;
  if (
    approvals !== undefined &&
    !(Number.isInteger(approvals) && approvals >= 1 && approvals <= 100)
  ) {
    return { decision: "deny", reason: `${source} returned an invalid number of approvals` };
  }
  return verdict;
}

/** Allows every call: the policy of an agent built without `permissions`. */
export const allowAll = (): PermissionManager => new PermissionManager({ default: "allow" });
