import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url);

// A resolve hook that refuses the provider SDKs: anything that imports them at load time fails.
const blockSdks = `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (/^(openai|@anthropic-ai\\/sdk)(\\/|$)/.test(specifier)) throw new Error("blocked: " + specifier);
  return next(specifier, context);
}`)}`;

describe("the built package and the provider SDKs", () => {
  it("imports harnessx and builds both providers without loading either SDK", async () => {
    const source = `
      import { register } from "node:module";
      register(${JSON.stringify(blockSdks)});
      const { Agent, openaiProvider, anthropicProvider } = await import("harnessx");
      const providers = [
        openaiProvider({ model: "gpt-5-mini", apiKey: "sk-test-0000000000" }),
        anthropicProvider({ model: "claude-sonnet-4-5", apiKey: "sk-ant-test-0000000000" }),
      ];
      const refused = await import("openai").then(() => false, (error) => String(error.message).includes("blocked"));
      console.log(JSON.stringify({ agent: typeof Agent, names: providers.map((p) => p.name), refused }));
    `;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", source], {
      cwd: root,
      timeout: 15_000,
    });
    // "refused" shows that the hook does stop an SDK import.
    expect(JSON.parse(stdout.trim())).toEqual({
      agent: "function",
      names: ["openai", "anthropic"],
      refused: true,
    });
  });
});
