import { describe, expect, it } from "vitest";
import { parseAgentConfig } from "../../../src/engine/config.js";
import { AgentConfig, ConfigError } from "../../../src/index.js";

const DEFAULTS = {
  name: "agent",
  model: "default",
  systemPrompt: "",
  maxTokens: 4096,
  temperature: 1,
  maxIterations: 20,
  promptCaching: true,
  contextWindow: 100_000,
  toolTimeoutMs: 300_000,
  providerTimeoutMs: 600_000,
  rateLimitWaitMs: 600_000,
  maxDepth: 5,
  outputRetries: 2,
};

function configErrorOf(config: unknown): ConfigError {
  try {
    parseAgentConfig(config);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("config_invalid");
    expect((error as ConfigError).name).toBe("ConfigError");
    expect((error as Error).message).toMatch(/^Invalid agent config: /);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

/** The `path: message` entries of a ConfigError's message. */
const problems = (error: ConfigError): string[] =>
  error.message.replace(/^Invalid agent config: /, "").split("; ");

describe("parseAgentConfig", () => {
  it("fills every default when given nothing", () => {
    expect(parseAgentConfig()).toEqual(DEFAULTS);
    expect(parseAgentConfig({})).toEqual(DEFAULTS);
    expect(parseAgentConfig(undefined)).toEqual(DEFAULTS);
  });

  it("keeps given fields and defaults the rest", () => {
    expect(
      parseAgentConfig({ name: "support", maxIterations: 3, promptCaching: false, temperature: 0 }),
    ).toEqual({
      ...DEFAULTS,
      name: "support",
      maxIterations: 3,
      promptCaching: false,
      temperature: 0,
    });
  });

  it("accepts a complete config unchanged", () => {
    const config = {
      name: "researcher",
      model: "claude-x",
      systemPrompt: "You are careful.",
      maxTokens: 1024,
      temperature: 0.2,
      maxIterations: 5,
      promptCaching: true,
      contextWindow: 8000,
      toolTimeoutMs: 30_000,
      providerTimeoutMs: 60_000,
      rateLimit: { requestsPerMinute: 600, tokensPerMinute: 90_000 },
      rateLimitWaitMs: 30_000,
      approvalTimeoutMs: 3_600_000,
      maxDepth: 3,
      outputRetries: 1,
    };
    expect(parseAgentConfig(config)).toEqual(config);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["an empty name", { name: "" }, "name"],
    ["a negative maxDepth", { maxDepth: -1 }, "maxDepth"],
    ["an empty model", { model: "" }, "model"],
    ["a non-string system prompt", { systemPrompt: 5 }, "systemPrompt"],
    ["zero maxTokens", { maxTokens: 0 }, "maxTokens"],
    ["fractional maxTokens", { maxTokens: 10.5 }, "maxTokens"],
    ["a temperature above 2", { temperature: 2.5 }, "temperature"],
    ["a negative temperature", { temperature: -0.1 }, "temperature"],
    ["zero maxIterations", { maxIterations: 0 }, "maxIterations"],
    ["a string promptCaching", { promptCaching: "yes" }, "promptCaching"],
    ["a negative contextWindow", { contextWindow: -1 }, "contextWindow"],
    ["zero toolTimeoutMs", { toolTimeoutMs: 0 }, "toolTimeoutMs"],
    ["a toolTimeoutMs past what timers can wait", { toolTimeoutMs: 2 ** 31 }, "toolTimeoutMs"],
    ["fractional providerTimeoutMs", { providerTimeoutMs: 1.5 }, "providerTimeoutMs"],
  ])("refuses %s, naming the field", (_label, config, path) => {
    const error = configErrorOf(config);
    expect(problems(error)).toHaveLength(1);
    expect(problems(error)[0]).toMatch(new RegExp(`^${path}: \\S`));
  });

  it("lists one `path: message` entry per bad field", () => {
    const error = configErrorOf({ maxTokens: -5, temperature: 9, name: 3 });
    const paths = problems(error).map((entry) => entry.split(": ")[0]);
    expect(paths.sort()).toEqual(["maxTokens", "name", "temperature"]);
  });

  it("refuses unknown keys and names them", () => {
    const error = configErrorOf({ maxIteration: 3, provider: "x" });
    expect(error.message).toContain("maxIteration");
    expect(error.message).toContain("provider");
  });

  it("reports unknown keys alongside bad fields", () => {
    const error = configErrorOf({ maxTokens: 0, colour: "blue" });
    expect(problems(error)).toHaveLength(2);
    expect(error.message).toMatch(/maxTokens: /);
    expect(error.message).toContain("colour");
  });

  it.each([
    ["a string", "fast"],
    ["null", null],
    ["an array", []],
  ])("refuses %s as a whole config", (_label, config) => {
    expect(configErrorOf(config).message).toMatch(/\(input\): /);
  });

  it("gives the same defaults as the exported AgentConfig schema", () => {
    expect(AgentConfig.parse({})).toEqual(DEFAULTS);
    expect(parseAgentConfig()).toEqual(AgentConfig.parse({}));
  });
});
