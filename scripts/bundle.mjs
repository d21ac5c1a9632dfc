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
// module instances. Every bundled file sits at dist/lib/, the depth of the sources it came
// from, so paths relative to `import.meta.url` ("../../package.json") resolve as before.
import { writeFileSync } from "node:fs";
import { build } from "esbuild";

const ENTRIES = {
  index: "dist/index.js",
  testing: "dist/testing.js",
  backend: "dist/backend.js",
  cli: "dist/cli/main.js",
};

await build({
  entryPoints: ENTRIES,
  outdir: "dist/lib",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  chunkNames: "[name]-[hash]",
  // The CLI's shebang goes on its stub, the file the `bin` names.
  logLevel: "warning",
});

const reexport = (from) => `export * from "${from}";\n`;
writeFileSync("dist/index.js", reexport("./lib/index.js"));
writeFileSync("dist/testing.js", reexport("./lib/testing.js"));
writeFileSync("dist/backend.js", reexport("./lib/backend.js"));
writeFileSync("dist/cli/main.js", '#!/usr/bin/env node\nimport "../lib/cli.js";\n');
