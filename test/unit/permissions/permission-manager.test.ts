import { describe, expect, it } from "vitest";
import {
  ConfigError,
  type PermissionDecision,
  PermissionManager,
  type PermissionManagerOptions,
  type PermissionRule,
  Registration,
  type ToolCall,
} from "../../../src/index.js";

const call = (name: string, input: Record<string, unknown> = {}): ToolCall => ({
  id: "call-1",
  name,
  input,
});

const decide = async (manager: PermissionManager, name: string, input = {}) =>
  (await manager.resolve(call(name, input))).decision;

function configErrorOf(action: () => unknown): ConfigError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("config_invalid");
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("PermissionManager defaults", () => {
  it("allows every call without options", async () => {
    const manager = new PermissionManager();
    expect(await manager.resolve(call("anything"))).toEqual({
      decision: "allow",
      reason: "default: allow",
    });
  });

  it.each(["allow", "deny", "ask"] as const)(
    "applies default %s to calls no rule matches",
    async (fallback) => {
      const manager = new PermissionManager({
        default: fallback,
        rules: [{ tool: "other", decision: fallback === "allow" ? "deny" : "allow" }],
      });
      expect(await manager.resolve(call("search"))).toEqual({
        decision: fallback,
        reason: `default: ${fallback}`,
      });
    },
  );
});

describe("rule matching", () => {
  it("matches an exact name only", async () => {
    const manager = new PermissionManager({ rules: [{ tool: "shell", decision: "deny" }] });
    expect(await decide(manager, "shell")).toBe("deny");
    expect(await decide(manager, "shell2")).toBe("allow");
    expect(await decide(manager, "my_shell")).toBe("allow");
    expect(await decide(manager, "Shell")).toBe("allow");
  });

  it("matches `*` against any run of characters, the whole name", async () => {
    const manager = new PermissionManager({ rules: [{ tool: "delete_*", decision: "ask" }] });
    expect(await decide(manager, "delete_file")).toBe("ask");
    expect(await decide(manager, "delete_")).toBe("ask");
    expect(await decide(manager, "delete_all_the_things")).toBe("ask");
    expect(await decide(manager, "undelete_file")).toBe("allow");
    expect(await decide(manager, "delete")).toBe("allow");
  });

  it("matches `?` against exactly one character", async () => {
    const manager = new PermissionManager({ rules: [{ tool: "tool_?", decision: "deny" }] });
    expect(await decide(manager, "tool_a")).toBe("deny");
    expect(await decide(manager, "tool_7")).toBe("deny");
    expect(await decide(manager, "tool_")).toBe("allow");
    expect(await decide(manager, "tool_ab")).toBe("allow");
  });

  it("treats regular-expression characters in a pattern literally", async () => {
    const manager = new PermissionManager({
      default: "allow",
      rules: [
        { tool: "a.b", decision: "deny" },
        { tool: "x+", decision: "deny" },
        { tool: "(g)", decision: "deny" },
        { tool: "[ab]", decision: "deny" },
        { tool: "^c$", decision: "deny" },
      ],
    });
    expect(await decide(manager, "a.b")).toBe("deny");
    expect(await decide(manager, "axb")).toBe("allow");
    expect(await decide(manager, "x+")).toBe("deny");
    expect(await decide(manager, "xx")).toBe("allow");
    expect(await decide(manager, "(g)")).toBe("deny");
    expect(await decide(manager, "g")).toBe("allow");
    expect(await decide(manager, "[ab]")).toBe("deny");
    expect(await decide(manager, "a")).toBe("allow");
    expect(await decide(manager, "^c$")).toBe("deny");
    expect(await decide(manager, "c")).toBe("allow");
  });

  it("`*` alone matches every tool", async () => {
    const manager = new PermissionManager({ rules: [{ tool: "*", decision: "ask" }] });
    expect(await decide(manager, "search")).toBe("ask");
    expect(await decide(manager, "delete_file")).toBe("ask");
  });

  it("uses the rule's reason, or one naming the rule", async () => {
    const manager = new PermissionManager({
      rules: [
        { tool: "delete_*", decision: "ask", reason: "deletes need a person" },
        { tool: "shell", decision: "deny" },
      ],
    });
    expect(await manager.resolve(call("delete_file"))).toEqual({
      decision: "ask",
      reason: "deletes need a person",
    });
    expect(await manager.resolve(call("shell"))).toEqual({
      decision: "deny",
      reason: 'rule "shell": deny',
    });
  });
});

describe("`when` predicates", () => {
  it("narrow a rule to calls whose input satisfies them", async () => {
    const seen: ToolCall[] = [];
    const manager = new PermissionManager({
      rules: [
        {
          tool: "shell",
          when: (toolCall) => {
            seen.push(toolCall);
            return String(toolCall.input.command).startsWith("rm ");
          },
          decision: "deny",
        },
      ],
    });
    expect(await decide(manager, "shell", { command: "rm -rf /" })).toBe("deny");
    expect(await decide(manager, "shell", { command: "ls" })).toBe("allow");
    expect(seen.map((each) => each.input.command)).toEqual(["rm -rf /", "ls"]);
  });

  it("are not called for tools the pattern does not match", async () => {
    let called = false;
    const manager = new PermissionManager({
      rules: [
        {
          tool: "shell",
          when: () => {
            called = true;
            return true;
          },
          decision: "deny",
        },
      ],
    });
    expect(await decide(manager, "search")).toBe("allow");
    expect(called).toBe(false);
  });

  it("deny the call when they throw, whatever the rule's decision", async () => {
    const manager = new PermissionManager({
      default: "allow",
      rules: [
        {
          tool: "search",
          when: () => {
            throw new Error("cannot read input");
          },
          decision: "allow",
        },
      ],
    });
    const verdict = await manager.resolve(call("search"));
    expect(verdict.decision).toBe("deny");
    expect(verdict.reason).toContain("cannot read input");
    expect(verdict.reason).toContain('"search"');
  });
});

describe("evaluation order: deny beats ask beats allow", () => {
  const orders: Array<[string, PermissionRule[]]> = [
    [
      "allow, ask, deny",
      [
        { tool: "delete_file", decision: "allow" },
        { tool: "delete_*", decision: "ask" },
        { tool: "*", decision: "deny" },
      ],
    ],
    [
      "deny, ask, allow",
      [
        { tool: "*", decision: "deny" },
        { tool: "delete_*", decision: "ask" },
        { tool: "delete_file", decision: "allow" },
      ],
    ],
    [
      "ask, allow, deny",
      [
        { tool: "delete_?ile", decision: "ask" },
        { tool: "delete_file", decision: "allow" },
        { tool: "delete_*", decision: "deny" },
      ],
    ],
  ];

  it.each(orders)("deny wins in order %s", async (_label, rules) => {
    expect(await decide(new PermissionManager({ rules }), "delete_file")).toBe("deny");
  });

  it("ask beats allow even when the allow rule is more specific and first", async () => {
    const manager = new PermissionManager({
      rules: [
        { tool: "delete_file", decision: "allow" },
        { tool: "delete_*", decision: "ask" },
      ],
    });
    expect(await decide(manager, "delete_file")).toBe("ask");
  });

  it("ask beats allow when the allow rule comes last", async () => {
    const manager = new PermissionManager({
      rules: [
        { tool: "*", decision: "ask" },
        { tool: "search", decision: "allow" },
      ],
    });
    expect(await decide(manager, "search")).toBe("ask");
  });

  it("an explicit allow rule overrides a stricter default", async () => {
    const manager = new PermissionManager({
      default: "deny",
      rules: [{ tool: "search", decision: "allow" }],
    });
    expect(await decide(manager, "search")).toBe("allow");
    expect(await decide(manager, "shell")).toBe("deny");
  });

  it("a rule whose predicate is false does not count", async () => {
    const manager = new PermissionManager({
      rules: [
        { tool: "shell", when: () => false, decision: "deny" },
        { tool: "shell", decision: "ask" },
      ],
    });
    expect(await decide(manager, "shell")).toBe("ask");
  });

  it("keeps the reason of the strictest rule", async () => {
    const manager = new PermissionManager({
      rules: [
        { tool: "*", decision: "ask", reason: "everything is reviewed" },
        { tool: "shell", decision: "deny", reason: "no shell" },
        { tool: "sh*", decision: "ask", reason: "shells are reviewed" },
      ],
    });
    expect(await manager.resolve(call("shell"))).toEqual({ decision: "deny", reason: "no shell" });
  });
});

describe("changing rules", () => {
  it("addRule applies to later checks and returns a Registration that removes it", async () => {
    const manager = new PermissionManager();
    expect(await decide(manager, "shell")).toBe("allow");
    const registration = manager.addRule({ tool: "shell", decision: "deny" });
    expect(registration).toBeInstanceOf(Registration);
    expect(await decide(manager, "shell")).toBe("deny");
    registration.close();
    expect(registration.closed).toBe(true);
    expect(await decide(manager, "shell")).toBe("allow");
    expect(manager.rules).toEqual([]);
  });

  it("removeRule removes a rule by identity and reports whether it was there", async () => {
    const rule: PermissionRule = { tool: "shell", decision: "deny" };
    const lookalike: PermissionRule = { tool: "shell", decision: "deny" };
    const manager = new PermissionManager({ rules: [rule] });
    expect(manager.removeRule(lookalike)).toBe(false);
    expect(await decide(manager, "shell")).toBe("deny");
    expect(manager.removeRule(rule)).toBe(true);
    expect(await decide(manager, "shell")).toBe("allow");
    expect(manager.removeRule(rule)).toBe(false);
  });

  it("lists rules in the order added", () => {
    const first: PermissionRule = { tool: "a", decision: "deny" };
    const second: PermissionRule = { tool: "b", decision: "ask" };
    const manager = new PermissionManager({ rules: [first] });
    manager.addRule(second);
    expect(manager.rules).toEqual([first, second]);
    expect(manager.rules[0]).toBe(first);
  });

  it("closing a registration twice removes the rule once", async () => {
    const manager = new PermissionManager();
    const rule: PermissionRule = { tool: "shell", decision: "deny" };
    const registration = manager.addRule(rule);
    manager.addRule({ tool: "shell", decision: "ask" });
    registration.close();
    registration.close();
    expect(await decide(manager, "shell")).toBe("ask");
    expect(manager.rules).toHaveLength(1);
  });

  it("refuses an invalid rule with a ConfigError naming the path", () => {
    const manager = new PermissionManager();
    const error = configErrorOf(() =>
      manager.addRule({ tool: "shell", decision: "maybe" as PermissionDecision }),
    );
    expect(error.message).toMatch(/decision: /);
    expect(manager.rules).toEqual([]);
    expect(configErrorOf(() => manager.addRule({ tool: "", decision: "deny" })).message).toMatch(
      /tool: /,
    );
  });
});

describe("custom resolver", () => {
  it("replaces rules and default, with a plain decision", async () => {
    const seen: string[] = [];
    const manager = new PermissionManager({
      default: "deny",
      rules: [{ tool: "*", decision: "deny" }],
      resolver: (toolCall) => {
        seen.push(toolCall.name);
        return toolCall.name === "search" ? "allow" : "ask";
      },
    });
    expect(await manager.resolve(call("search"))).toEqual({
      decision: "allow",
      reason: "custom resolver: allow",
    });
    expect(await decide(manager, "shell")).toBe("ask");
    expect(seen).toEqual(["search", "shell"]);
  });

  it("may return a verdict with its own reason", async () => {
    const manager = new PermissionManager({
      resolver: () => ({ decision: "deny", reason: "outside business hours" }),
    });
    expect(await manager.resolve(call("search"))).toEqual({
      decision: "deny",
      reason: "outside business hours",
    });
  });

  it("denies when it throws or rejects (fails closed)", async () => {
    const throwing = new PermissionManager({
      resolver: () => {
        throw new Error("policy service down");
      },
    });
    expect(await throwing.resolve(call("search"))).toEqual({
      decision: "deny",
      reason: "custom resolver failed: policy service down",
    });
    const rejecting = new PermissionManager({
      resolver: async () => Promise.reject(new Error("timeout")),
    });
    expect(await decide(rejecting, "search")).toBe("deny");
  });

  it("may be async", async () => {
    const manager = new PermissionManager({
      resolver: async (toolCall) => {
        await Promise.resolve();
        return toolCall.input.safe === true ? "allow" : { decision: "ask", reason: "unsafe input" };
      },
    });
    expect(await decide(manager, "search", { safe: true })).toBe("allow");
    expect(await manager.resolve(call("search", { safe: false }))).toEqual({
      decision: "ask",
      reason: "unsafe input",
    });
  });

  it.each([
    ["an unknown string", "maybe"],
    ["a verdict with an unknown decision", { decision: "yes", reason: "sure" }],
    ["undefined", undefined],
    ["null", null],
    ["a number", 1],
  ])("denies when it returns %s", async (_label, value) => {
    const manager = new PermissionManager({
      resolver: () => value as PermissionDecision,
    });
    const verdict = await manager.resolve(call("search"));
    expect(verdict.decision).toBe("deny");
    expect(verdict.reason).toMatch(/unknown decision/);
  });
});

describe("invalid options", () => {
  it.each<[string, unknown, RegExp]>([
    ["an unknown default", { default: "sometimes" }, /default: /],
    ["rules that are not an array", { rules: "deny all" }, /rules: /],
    ["a rule without a tool", { rules: [{ decision: "deny" }] }, /rules\.0\.tool: /],
    [
      "a rule with an unknown decision",
      {
        rules: [
          { tool: "a", decision: "allow" },
          { tool: "b", decision: "nope" },
        ],
      },
      /rules\.1\.decision: /,
    ],
    [
      "a when that is not a function",
      { rules: [{ tool: "a", decision: "deny", when: true }] },
      /rules\.0\.when: /,
    ],
    ["a resolver that is not a function", { resolver: "allow" }, /resolver: /],
  ])("refuses %s with a ConfigError naming the path", (_label, options, path) => {
    const error = configErrorOf(() => new PermissionManager(options as PermissionManagerOptions));
    expect(error.message).toMatch(/^Invalid PermissionManager options: /);
    expect(error.message).toMatch(path);
  });
});
