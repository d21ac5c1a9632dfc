// After `tsc`: bundles the package's entry points into dist/lib/ (SPEC §15). Node loads one
// file per ES module, and resolving, reading and compiling the ~230 modules that
// `import "harnessx"` reached cost more than everything they then did; a bundle loads as a few
// files. Code reached only through a dynamic `import()` (the Redis queues, MCP, the provider
// SDKs' adapters) stays in chunks of its own, loaded on first use. Packages stay external: the
// user's node_modules provides them, optional peers included.
//
// tsc's per-module output stays in dist/ for the types (dist/**/*.d.ts) it ships with; the
// entries the package exports (index, testing, backend, the CLI) are replaced by one-line
// modules that re-export their bundle, so every route into the package reaches the same
// module instances. The `harnessx` entry and the chunks it imports are then folded into one
// file, dist/lib/core.js (scripts/coalesce-core.mjs). Every bundled file sits at dist/lib/, the depth of the sources it came
// from, so paths relative to `import.meta.url` ("../../package.json") resolve as before.
//
// The deferred half. What a direct run does not need — the durable runtime and its backends,
// the dashboard, the real providers' adapters — is the better part of the bundle, and
// compiling it was most of what `import "harnessx"` still cost. It is an entry of its own
// (dist/lib/deferred.js); in the `harnessx` entry each of its exports is a stand-in
// (`lazyValue`) that loads it on first use: `new AgentRuntime(...)`, `memoryBackend()`,
// `openaiProvider(...)`, `x instanceof RunHandle`. The load is synchronous (these are
// synchronous constructors and factories): `require(esm)`, which Node >= 20.19 has and which
// forbids top-level await in that graph. It imports what it shares with the core from
// core.js, so both halves have one instance of every module. Only `harnessx`'s entry gets stand-ins: its
// types, the sources and the other entries (testing, the CLI) are unchanged.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { build } from "esbuild";
import { coalesceCore } from "./coalesce-core.mjs";

/** The deferred modules (as tsc wrote them under dist/) and the exports `harnessx` takes from them. */
const DEFERRED = {
  "runtime/agent-runtime.js": ["AgentRuntime"],
  "runtime/run-handle.js": ["RunHandle"],
  "runtime/memory-backend.js": ["memoryBackend"],
  "runtime/redis-backend.js": ["redisBackend"],
  "dashboard/create-dashboard.js": ["createDashboard"],
  "providers/openai.js": ["openaiProvider"],
  "providers/anthropic.js": ["anthropicProvider"],
  "providers/ai-sdk.js": ["aiSdkProvider"],
};
const names = Object.values(DEFERRED).flat();
writeFileSync(
  "dist/deferred.js",
  Object.entries(DEFERRED)
    .map(([file, exported]) => `export { ${exported.join(", ")} } from "./${file}";\n`)
    .join(""),
);
// Bundled into a chunk under dist/lib/, next to deferred.js: `import.meta.url` finds it.
writeFileSync(
  "dist/deferred-stand-ins.js",
  `import { lazyValue } from "./core/optional-dependency.js";
let deferred;
const load = () => {
  deferred ??= process.getBuiltinModule("node:module").createRequire(import.meta.url)("./deferred.js");
  return deferred;
};
${names.map((name) => `export const ${name} = lazyValue(() => load().${name});`).join("\n")}
`,
);
const index = resolve("dist/index.js");
const deferredPaths = new Set(Object.keys(DEFERRED).map((file) => resolve("dist", file)));
/** `harnessx`'s entry takes the deferred exports from the stand-ins instead of their modules. */
const standIns = {
  name: "deferred-stand-ins",
  setup(on) {
    on.onResolve({ filter: /^\.\// }, (args) =>
      args.importer === index && deferredPaths.has(resolve(args.resolveDir, args.path))
        ? { path: resolve("dist/deferred-stand-ins.js") }
        : undefined,
    );
  },
};

const ENTRIES = {
  index: "dist/index.js",
  testing: "dist/testing.js",
  cli: "dist/cli/main.js",
  deferred: "dist/deferred.js",
};

const { metafile } = await build({
  entryPoints: ENTRIES,
  outdir: "dist/lib",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  chunkNames: "[name]-[hash]",
  plugins: [standIns],
  metafile: true,
  // The CLI's shebang goes on its stub, the file the `bin` names.
  logLevel: "warning",
});

const exported = await coalesceCore({ outdir: "dist/lib", entry: "dist/lib/index.js", metafile });

// core.js also exports the internals the other files import from it: `harnessx` names its own.
writeFileSync("dist/index.js", `export { ${exported.join(", ")} } from "./lib/core.js";\n`);
writeFileSync("dist/testing.js", 'export * from "./lib/testing.js";\n');
// harnessx/backend exports types only.
writeFileSync("dist/backend.js", "export {};\n");
writeFileSync("dist/cli/main.js", '#!/usr/bin/env node\nimport "../lib/cli.js";\n');
