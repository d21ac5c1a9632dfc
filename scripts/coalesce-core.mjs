// Part of scripts/bundle.mjs: the `harnessx` entry and every chunk it imports statically become
// one file, dist/lib/core.js (SPEC §15). esbuild's code splitting puts code shared by a
// different set of entries (the testing and CLI entries, the deferred half, each dynamic
// `import()`) in a chunk of its own, so `import "harnessx"` loaded about fifteen files; Node
// resolves, reads, compiles and links each ES module on its own, and those fixed costs were
// about a third of what the import cost over its floor. The other files then import from
// core.js instead of the chunks it replaced, so every module still has one instance.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { build } from "esbuild";

const CORE = "core.js";

/**
 * Folds `entry` (an output path in `metafile`, such as "dist/lib/index.js") and its static
 * imports into `<outdir>/core.js`; returns the names `entry` exported, for its stub.
 */
export async function coalesceCore({ outdir, entry, metafile }) {
  const { outputs } = metafile;
  const folded = new Set();
  const visit = (path) => {
    if (folded.has(path)) return;
    folded.add(path);
    for (const each of outputs[path].imports) {
      if (each.kind === "import-statement" && !each.external) visit(each.path);
    }
  };
  visit(entry);
  const chunks = [...folded].filter((path) => path !== entry).map((path) => basename(path));
  const replaced = new Set([...chunks, basename(entry)]);
  checkUniqueExports(
    outputs,
    entry,
    [...folded].filter((path) => path !== entry),
  );

  // The entry's own text (its explicit exports win over the chunks'), then every chunk's
  // exports: the code outside that imported any of them finds each name in core.js.
  const synthetic = join(outdir, "core-entry.js");
  writeFileSync(
    synthetic,
    `${readFileSync(entry, "utf8")}\n${chunks.map((chunk) => `export * from "./${chunk}";`).join("\n")}\n`,
  );
  await build({
    entryPoints: [synthetic],
    outfile: join(outdir, CORE),
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    // A dynamic import() keeps loading its file on first use (core.js sits in the folder of
    // the files it replaced), or core.js itself when that file is folded in.
    plugins: [
      {
        name: "dynamic-imports-stay",
        setup(on) {
          on.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind !== "dynamic-import") return undefined;
            const folds = replaced.has(basename(args.path));
            return { path: folds ? `./${CORE}` : args.path, external: true };
          });
        },
      },
    ],
    // The chunks' bare imports only ordered their evaluation: every chunk is in the bundle.
    logOverride: { "ignored-bare-import": "silent" },
    logLevel: "warning",
  });
  rmSync(synthetic);
  for (const path of folded) rmSync(path);

  const reference = /(["'])\.\/([\w-]+\.js)\1/g;
  for (const file of readdirSync(outdir).filter((name) => name.endsWith(".js"))) {
    if (file === CORE) continue;
    const path = join(outdir, file);
    const text = readFileSync(path, "utf8");
    const rewritten = text.replace(reference, (whole, quote, name) =>
      replaced.has(name) ? `${quote}./${CORE}${quote}` : whole,
    );
    if (rewritten !== text) writeFileSync(path, rewritten);
  }
  return outputs[entry].exports;
}

/**
 * Two chunks exporting one name would make `export *` drop it, and a name the entry exports
 * would hide a chunk's unless it is that chunk's, re-exported: refuse rather than guess.
 */
function checkUniqueExports(outputs, entry, chunks) {
  const owner = new Map();
  for (const path of chunks) {
    for (const name of outputs[path].exports) {
      if (owner.has(name)) {
        throw new Error(`coalesce-core: ${name} is exported by ${owner.get(name)} and ${path}.`);
      }
      owner.set(name, path);
    }
  }
  const entryText = readFileSync(entry, "utf8");
  for (const name of outputs[entry].exports.filter((each) => owner.has(each))) {
    const from = basename(owner.get(name));
    const reexported = new RegExp(
      `import\\s*\\{[^}]*\\b${name}\\b[^}]*\\}\\s*from\\s*"\\./${from}"`,
    );
    if (!reexported.test(entryText)) {
      throw new Error(`coalesce-core: ${entry} exports a ${name} that is not ${from}'s.`);
    }
  }
}
