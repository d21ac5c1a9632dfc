// The packed package as a user gets it (SPEC §15), run by .ci/run after the tests:
//   npm pack; `npm install harnessx-*.tgz` into a fresh project (no optional package);
//   an ES module and a CommonJS module (.mts and .cts) type-checked together with strict,
//   exactOptionalPropertyTypes, noUncheckedIndexedAccess and skipLibCheck: false, then run:
//   each does a direct run with harnessx/testing's scripted provider; the ES module also uses
//   openaiProvider and createDashboard without their packages and gets DependencyMissingError;
//   the CLI says the same and exits 1. Prints the install size and the import time as JSON.
//
//   npm run build && node scripts/consumer-check.mjs     # or: npm run consumer-check
//
// Fast on purpose: one install from the npm cache (--prefer-offline, no audit, no fund), one
// tsc run for both module kinds (this repository's TypeScript and @types/node).
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const MAX_INSTALL_MB = 40;
const log = (line) => process.stderr.write(`[consumer-check] ${line}\n`);
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  log(`${ok ? "ok  " : "FAIL"} ${what}`);
};

if (!existsSync(join(root, "dist/index.js"))) {
  throw new Error("dist/ is missing: run `npm run build` first.");
}
const scratch = mkdtempSync(join(tmpdir(), "harnessx-consumer-"));
const npm = (args, cwd) =>
  execFileSync(
    "npm",
    [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"],
    {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    },
  );

const STRICT = {
  target: "ES2022",
  module: "nodenext",
  moduleResolution: "nodenext",
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: false,
  types: ["node"],
  typeRoots: [join(root, "node_modules/@types")],
};

// An ES module: a direct run, then two features whose optional packages are not installed.
const ESM = `
import { Agent, AgentRuntime, createDashboard, HarnessError, memoryBackend, openaiProvider } from "harnessx";
import { ScriptedProvider, textResponse } from "harnessx/testing";

const agent = new Agent({ provider: new ScriptedProvider([textResponse("from an ES module")]) });
const result = await agent.run("go");

const withoutSdk = await new Agent({ provider: openaiProvider({ model: "gpt-5-mini", apiKey: "sk-test" }) }).run("hi");

const runtime = new AgentRuntime({ agents: [], backend: memoryBackend() });
await runtime.start();
let dashboard: unknown;
try {
  createDashboard({ runtime, tokens: { ops: "a-token-of-sixteen-chars" } });
} catch (error) {
  dashboard = HarnessError.isHarnessError(error) ? { code: error.code, message: error.message } : String(error);
}
await runtime.close();
console.log(JSON.stringify({ status: result.status, output: result.output, provider: withoutSdk.error ?? null, dashboard }));
`;

// A CommonJS module (TypeScript emits require("harnessx")): require(esm), Node >= 20.19.
const CJS = `
import { Agent } from "harnessx";
import { ScriptedProvider, textResponse } from "harnessx/testing";

async function main(): Promise<void> {
  const agent = new Agent({ provider: new ScriptedProvider([textResponse("from CommonJS")]) });
  const result = await agent.run("go");
  console.log(JSON.stringify({ status: result.status, output: result.output, commonJs: typeof require === "function" }));
}
void main();
`;

/** Apparent size (the files' bytes) and disk usage (blocks, as `du` counts) of a folder. */
function sizeOf(directory) {
  let bytes = 0;
  let blocks = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    const stats = lstatSync(path);
    blocks += stats.blocks;
    if (entry.isDirectory()) {
      const inner = sizeOf(path);
      bytes += inner.bytes;
      blocks += inner.blocks;
    } else bytes += stats.size;
  }
  return { bytes, blocks };
}

function wallMs(args, cwd) {
  const began = performance.now();
  const child = spawnSync(process.execPath, args, { cwd, encoding: "utf8" });
  if (child.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${child.stderr}`);
  return performance.now() - began;
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value) => Math.round(value * 10) / 10;

const began = performance.now();
try {
  const packed = JSON.parse(npm(["pack", "--json", "--pack-destination", scratch], root))[0];
  const tarball = join(scratch, packed.filename);
  log(`packed ${packed.filename}: ${packed.entryCount} files, ${round(packed.size / 1024)} kB`);

  const project = join(scratch, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true }));
  const installBegan = performance.now();
  npm(["install", tarball], project);
  const installSeconds = round((performance.now() - installBegan) / 1000);
  const modules = join(project, "node_modules");
  const installed = readdirSync(modules)
    .flatMap((name) =>
      name.startsWith("@")
        ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`)
        : [name],
    )
    .filter((name) => !name.startsWith("."));
  const size = sizeOf(modules);
  const install = {
    packages: installed.length,
    apparentMb: round(size.bytes / 1024 / 1024),
    diskMb: round((size.blocks * 512) / 1024 / 1024),
    seconds: installSeconds,
  };
  check(
    install.apparentMb <= MAX_INSTALL_MB,
    `npm install harnessx: ${install.apparentMb} MB (at most ${MAX_INSTALL_MB})`,
  );
  const optional = [
    "openai",
    "@anthropic-ai/sdk",
    "@modelcontextprotocol/sdk",
    "express",
    "@bull-board/api",
  ];
  check(
    optional.every((name) => !installed.includes(name)),
    "no optional peer dependency installed",
  );

  writeFileSync(join(project, "esm.mts"), ESM);
  writeFileSync(join(project, "cjs.cts"), CJS);
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({ compilerOptions: STRICT, files: ["esm.mts", "cjs.cts"] }, null, 2),
  );
  const tsc = spawnSync(
    process.execPath,
    [join(root, "node_modules/typescript/bin/tsc"), "-p", project],
    {
      encoding: "utf8",
    },
  );
  check(
    tsc.status === 0,
    `strict types (skipLibCheck: false), ESM and CommonJS${tsc.status === 0 ? "" : `:\n${tsc.stdout}${tsc.stderr}`}`,
  );

  const runModule = (file) => {
    const child = spawnSync(process.execPath, [file], {
      cwd: project,
      encoding: "utf8",
      timeout: 30_000,
    });
    if (child.status !== 0) return { failed: child.stderr || `exit ${child.status}` };
    return JSON.parse(child.stdout.trim().split("\n").at(-1));
  };
  const esm = runModule("esm.mjs");
  check(
    esm.status === "completed" && esm.output === "from an ES module",
    `ES module direct run: ${JSON.stringify(esm)}`,
  );
  check(
    esm.provider?.code === "dependency_missing" &&
      esm.provider?.message?.includes('npm install "openai@'),
    `openaiProvider without openai: ${esm.provider?.code}: ${esm.provider?.message}`,
  );
  check(
    esm.dashboard?.code === "dependency_missing" &&
      esm.dashboard?.message?.includes('npm install "express@'),
    `createDashboard without express: ${esm.dashboard?.code}: ${esm.dashboard?.message}`,
  );
  const cjs = runModule("cjs.cjs");
  check(
    cjs.status === "completed" && cjs.output === "from CommonJS" && cjs.commonJs === true,
    `CommonJS direct run: ${JSON.stringify(cjs)}`,
  );

  const cli = spawnSync(
    process.execPath,
    [join(modules, "harnessx/dist/cli/main.js"), "tour", "--provider", "openai"],
    {
      cwd: project,
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, OPENAI_API_KEY: "sk-test" },
    },
  );
  check(
    cli.status === 1 && cli.stderr.includes('npm install "openai@'),
    `CLI without openai exits ${cli.status}: ${cli.stderr.trim()}`,
  );

  // Import time: fresh processes, bare node and `import "harnessx"` alternately, median of 5.
  const bare = [];
  const harnessx = [];
  for (let round = 0; round < 5; round += 1) {
    bare.push(wallMs(["-e", "0"], project));
    harnessx.push(wallMs(["--input-type=module", "-e", 'await import("harnessx")'], project));
  }
  const importMs = { bareNode: round(median(bare)), harnessx: round(median(harnessx)) };
  importMs.overBareNode = round(importMs.harnessx - importMs.bareNode);

  process.stdout.write(
    `${JSON.stringify(
      {
        check: "consumer",
        node: process.version,
        tarball: {
          files: packed.entryCount,
          kB: round(packed.size / 1024),
          unpackedKB: round(packed.unpackedSize / 1024),
        },
        install,
        importMs,
        seconds: round((performance.now() - began) / 1000),
        failures,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exitCode = failures.length === 0 ? 0 : 1;
