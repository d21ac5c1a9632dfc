// The layering rules of .dependency-cruiser.cjs (run by `npm run lint`) bite: a small tree with
// one import of each kind DESIGN.md forbids is refused, each by the rule that names it, and the
// same tree without them passes.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = join(ROOT, "node_modules/.bin/depcruise");

const trees: string[] = [];

afterEach(async () => {
  await Promise.all(trees.splice(0).map((tree) => rm(tree, { recursive: true, force: true })));
});

/** A tree of `files` (path → source) with this project's tsconfig and node_modules. */
async function treeOf(files: Record<string, string>): Promise<string> {
  const tree = await mkdtemp(join(tmpdir(), "harnessx-layering-"));
  trees.push(tree);
  await symlink(join(ROOT, "node_modules"), join(tree, "node_modules"), "dir");
  await writeFile(
    join(tree, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true },
      include: ["src"],
    }),
  );
  for (const [path, source] of Object.entries(files)) {
    await mkdir(dirname(join(tree, path)), { recursive: true });
    await writeFile(join(tree, path), source);
  }
  return tree;
}

/** The rules the cruise in `tree` reports broken, by rule name, each with its `from` file. */
async function violations(tree: string): Promise<string[]> {
  const { stdout } = await run(
    DEPCRUISE,
    ["src", "--config", CONFIG, "--output-type", "json", "--no-progress"],
    { cwd: tree, maxBuffer: 16 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
  const report = JSON.parse(stdout) as {
    summary: { violations: Array<{ rule: { name: string }; from: string }> };
  };
  return report.summary.violations.map((each) => `${each.rule.name}: ${each.from}`).sort();
}

const FINE = {
  "src/core/errors.ts": "export class HarnessError extends Error {}\n",
  "src/tools/tool.ts":
    'import { HarnessError } from "../core/errors.js";\nexport const made = new HarnessError();\n',
  "src/engine/agent.ts": 'import { made } from "../tools/tool.js";\nexport const agent = made;\n',
  "src/cli/main.ts": 'import { agent } from "../engine/agent.js";\nexport const main = agent;\n',
  "src/testing.ts": 'export { made } from "./tools/tool.js";\n',
};

describe("the layering rules", () => {
  it("pass a tree whose imports all point downward", async () => {
    expect(await violations(await treeOf(FINE))).toEqual([]);
  }, 60_000);

  it("refuse each forbidden import by the rule that names it", async () => {
    const tree = await treeOf({
      ...FINE,
      // A room importing one above it, and a folder circle with it.
      "src/extensions/extension.ts":
        'import type { agent } from "../engine/agent.js";\nexport type Agent = typeof agent;\n',
      "src/engine/uses-extension.ts":
        'import type { Agent } from "../extensions/extension.js";\nexport type A = Agent;\n',
      // The entry point loading the CLI.
      "src/testing.ts": 'export { main } from "./cli/main.js";\n',
      // A machine importing an effect and a node: module.
      "src/machines/run-machine.ts":
        'import { readFileSync } from "node:fs";\nimport { pino } from "pino";\nexport const x = [readFileSync, pino];\n',
      // Redis outside runtime/, a model SDK outside providers/.
      "src/store/queue.ts": 'import type { Queue } from "bullmq";\nexport type Q = Queue;\n',
      "src/engine/model.ts": 'import type OpenAI from "openai";\nexport type O = OpenAI;\n',
      // The dashboard past AgentRuntime.
      "src/runtime/redis-keys.ts": "export const key = 1;\n",
      "src/dashboard/api.ts":
        'import { key } from "../runtime/redis-keys.js";\nexport const k = key;\n',
      // A file circle.
      "src/tools/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "src/tools/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
    });

    const found = await violations(tree);

    expect(found).toEqual([
      "dashboard-through-agent-runtime: src/dashboard/api.ts",
      "extensions-imports-downward: src/extensions/extension.ts",
      "machines-import-no-node: src/machines/run-machine.ts",
      "machines-perform-no-effects: src/machines/run-machine.ts",
      "no-file-cycles: src/tools/a.ts",
      "no-folder-cycles: src/engine",
      "no-folder-cycles: src/extensions",
      "nothing-imports-cli: src/testing.ts",
      "only-providers-touch-models: src/engine/model.ts",
      "only-runtime-touches-redis: src/store/queue.ts",
    ]);
  }, 60_000);
});
