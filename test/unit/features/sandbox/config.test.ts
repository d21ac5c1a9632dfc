import { describe, expect, it } from "vitest";
import { parseSandboxConfig } from "../../../../src/features/sandbox/config.js";
import { ConfigError, Sandbox, type SandboxConfig } from "../../../../src/index.js";

describe("Sandbox config", () => {
  it("fills the documented defaults and makes cwd absolute", () => {
    expect(parseSandboxConfig({ cwd: "work" })).toEqual({
      tier: "auto",
      cwd: `${process.cwd()}/work`,
      timeoutMs: 30_000,
      maxOutputBytes: 1_000_000,
      env: {},
    });
  });

  it.each([
    [{}, "cwd"],
    [{ cwd: "" }, "cwd"],
    [{ cwd: "/tmp", tier: "docker" }, "tier"],
    [{ cwd: "/tmp", timeoutMs: 0 }, "timeoutMs"],
    [{ cwd: "/tmp", timeoutMs: 1.5 }, "timeoutMs"],
    [{ cwd: "/tmp", maxOutputBytes: -1 }, "maxOutputBytes"],
    [{ cwd: "/tmp", env: { "NOT-A-NAME": "x" } }, "env.NOT-A-NAME"],
    [{ cwd: "/tmp", env: { TOKEN: 5 } }, "env.TOKEN"],
    [{ cwd: "/tmp", bwrapPath: "" }, "bwrapPath"],
    [{ cwd: "/tmp", cwdd: "/tmp" }, "(input)"],
  ])("refuses %j with a ConfigError naming %s", (config, path) => {
    const build = () => new Sandbox(config as SandboxConfig);
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(/^Invalid sandbox config: /);
    expect(build).toThrow(`${path}: `);
  });
});
