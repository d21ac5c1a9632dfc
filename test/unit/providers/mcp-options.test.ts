import { describe, expect, it } from "vitest";
import { ConfigError, type McpToolsOptions, mcpTools } from "../../../src/index.js";

// Options are checked before anything is started or loaded: these tests do no I/O.
describe("mcpTools options", () => {
  it.each([
    [{}, /command: Invalid input/],
    [{ command: "" }, /command: Too small/],
    [{ command: "node", args: "server.js" }, /args: Invalid input: expected array/],
    [{ command: "node", stderr: "pipe" }, /stderr: Invalid option/],
    [{ command: "node", frob: 1 }, /Unrecognized key: "frob"/],
    [{ url: "not a url" }, /url: Invalid URL/],
    [{ url: "ftp://example.test/mcp" }, /url: Invalid URL/],
    [{ url: "http://127.0.0.1/mcp", command: "node" }, /Unrecognized key: "command"/],
    [{ command: "node", prefix: "my.prefix" }, /prefix: use letters/],
    [{ command: "node", timeoutMs: 0 }, /timeoutMs: Too small/],
    [{ command: "node", recovery: "maybe" }, /recovery: Invalid option/],
  ])("refuses %j with a ConfigError naming the path", async (options, message) => {
    const failure = await mcpTools(options as unknown as McpToolsOptions).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).message).toMatch(message);
  });

  it("refuses options that are not an object", async () => {
    await expect(mcpTools(null as unknown as McpToolsOptions)).rejects.toThrow(ConfigError);
  });
});
