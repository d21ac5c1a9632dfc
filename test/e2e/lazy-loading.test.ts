import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url);

/** The packages `import "harnessx"` must not load (SPEC §15): each loads when its feature is used. */
const LAZY_PACKAGES = [
  "express",
  "@bull-board/api",
  "@bull-board/express",
  "@modelcontextprotocol/sdk",
  "ajv",
  "openai",
  "@anthropic-ai/sdk",
  "minisearch",
  "yaml",
  "bullmq",
  "ioredis",
  "rate-limiter-flexible",
] as const;

/** Packages of the core that still wait for their first use: a run, a logger, an approval. */
const CORE_ON_FIRST_USE = ["pino", "@opentelemetry/api", "safe-stable-stringify"] as const;

// Records every module the child loads: ESM through a resolve hook (its own thread, so it
// appends to a file), CommonJS through the require cache the child prints at the end.
const HOOKS = `
import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.HARNESSX_LOAD_LOG, result.url + "\\n");
  return result;
}`;
const REGISTER = `
import { register } from "node:module";
register(new URL("./hooks.mjs", import.meta.url));`;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "harnessx-lazy-"));
  await writeFile(join(scratch, "hooks.mjs"), HOOKS);
  await writeFile(join(scratch, "register.mjs"), REGISTER);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The package of a file under node_modules ("@scope/name" or "name"). */
const packageOf = (file: string): string | undefined =>
  /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/
    .exec(decodeURIComponent(file))?.[1]
    ?.replace("\\", "/");

/**
 * Runs `source` (an ES module importing "harnessx", resolved through the exports map to dist/)
 * in a fresh node; `snapshot()` in it marks a point. Returns the packages loaded at each mark.
 */
async function packagesLoaded(source: string, name: string): Promise<Set<string>[]> {
  const snapshots = await filesLoaded(source, name);
  return snapshots.map((files) => new Set(files.flatMap((file) => packageOf(file) ?? [])));
}

/** The files of harnessx's bundle (dist/lib/) among `files`, by name. */
const bundleFiles = (files: string[] | undefined): string[] =>
  [
    ...new Set(
      (files ?? []).flatMap((file) => /[\\/]dist[\\/]lib[\\/]([^\\/]+\.js)$/.exec(file)?.[1] ?? []),
    ),
  ].sort();

/** As `packagesLoaded`, the files (paths or file: URLs) loaded at each mark. */
async function filesLoaded(source: string, name: string): Promise<string[][]> {
  const log = join(scratch, `${name}.log`);
  await writeFile(log, "");
  const program = `
    import { createRequire } from "node:module";
    import { readFileSync } from "node:fs";
    const snapshots = [];
    const snapshot = () => snapshots.push([
      ...readFileSync(process.env.HARNESSX_LOAD_LOG, "utf8").split("\\n"),
      ...Object.keys(createRequire(import.meta.url).cache),
    ]);
    ${source}
    console.log(JSON.stringify(snapshots));`;
  const { stdout } = await run(
    process.execPath,
    ["--import", join(scratch, "register.mjs"), "--input-type=module", "-e", program],
    { cwd: root, timeout: 20_000, env: { ...process.env, HARNESSX_LOAD_LOG: log } },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "[]") as string[][];
}

describe('import "harnessx"', () => {
  it("loads none of the optional or heavy packages, only what the core needs", async () => {
    const [loaded] = await packagesLoaded(
      `await import("harnessx"); await import("harnessx/testing"); snapshot();`,
      "import",
    );
    // The recorder sees both ESM (zod) and CommonJS (xstate's entry) packages of the core.
    expect(loaded).toContain("zod");
    expect(loaded).toContain("xstate");
    expect(LAZY_PACKAGES.filter((name) => loaded?.has(name))).toEqual([]);
    expect(CORE_ON_FIRST_USE.filter((name) => loaded?.has(name))).toEqual([]);
  });

  it("loads pino and the OpenTelemetry API with the first agent and its run", async () => {
    const [imported, made, ran] = await packagesLoaded(
      `
      const { Agent } = await import("harnessx");
      const { ScriptedProvider, textResponse } = await import("harnessx/testing");
      snapshot();
      const agent = new Agent({ provider: new ScriptedProvider([textResponse("done")]) });
      snapshot();
      const result = await agent.run("go");
      if (result.output !== "done") throw new Error("the run did not complete: " + result.status);
      snapshot();
      `,
      "first-run",
    );
    expect(imported?.has("pino")).toBe(false);
    expect(made?.has("pino")).toBe(true);
    expect(made?.has("@opentelemetry/api")).toBe(false);
    expect(ran?.has("@opentelemetry/api")).toBe(true);
  });

  it("loads the core as one file, and the runtime half on the first use of one of its exports", async () => {
    const [imported, used] = await filesLoaded(
      `
      const hx = await import("harnessx");
      snapshot();
      const { ScriptedProvider, textResponse } = await import("harnessx/testing");
      // A stand-in acts as the real class: options checked when made, subclasses, instanceof,
      // one instance of every module shared with the core (its errors, its Agent).
      let refused;
      try { new hx.AgentRuntime({ agents: "none" }); } catch (error) { refused = error; }
      if (!(refused instanceof hx.ConfigError)) throw new Error("bad options were not a ConfigError: " + refused);
      class Runtime extends hx.AgentRuntime { kind() { return "mine"; } }
      const agent = new hx.Agent({ config: { name: "a" }, provider: new ScriptedProvider([textResponse("done")]) });
      const runtime = new Runtime({ agents: [agent], backend: hx.memoryBackend() });
      if (!(runtime instanceof hx.AgentRuntime) || runtime.kind() !== "mine") throw new Error("not a subclass");
      await runtime.start();
      const handle = await runtime.submit("a", "go");
      if (!(handle instanceof hx.RunHandle)) throw new Error("the handle is not a RunHandle");
      const result = await handle.result();
      if (result.output !== "done") throw new Error("the run did not complete: " + result.status);
      await runtime.close();
      snapshot();
      `,
      "deferred",
    );
    expect(bundleFiles(imported)).toEqual(["core.js"]);
    expect(bundleFiles(used)).toContain("deferred.js");
  });

  it("loads each package when its feature is first used", async () => {
    const snapshots = await packagesLoaded(
      `
      const hx = await import("harnessx");
      snapshot();
      const runtime = new hx.AgentRuntime({ agents: [], backend: hx.memoryBackend() });
      await runtime.start();
      hx.createDashboard({ runtime, tokens: { ops: "a-token-of-16-chars-or-more" } });
      snapshot();
      const backend = hx.redisBackend({ url: "redis://127.0.0.1:1" });
      snapshot();
      const provider = hx.openaiProvider({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:1/v1", maxRetries: 0 });
      await provider.complete({ messages: [{ role: "user", content: "hi" }], tools: [] }).catch(() => {});
      snapshot();
      await backend.close({ timeoutMs: 1000 }).catch(() => {});
      await runtime.close();
      `,
      "features",
    );
    const [before, dashboard, redis, openai] = snapshots;
    expect(LAZY_PACKAGES.filter((name) => before?.has(name))).toEqual([]);
    expect(dashboard?.has("express")).toBe(true);
    expect(dashboard?.has("ioredis")).toBe(false);
    expect(redis?.has("ioredis")).toBe(true);
    expect(redis?.has("openai")).toBe(false);
    expect(openai?.has("openai")).toBe(true);
  });
});
