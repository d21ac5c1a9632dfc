// After `tsc`: every line of dist/**/*.d.ts that imports a type from an optional peer dependency
// (package.json's peerDependenciesMeta) gets a `// @ts-ignore` above it, so that a consumer
// with `skipLibCheck: false` that has not installed the package still compiles (the type is
// then `any`); with the package installed, the types are its own. tsc drops such comments from
// the declarations it emits, hence this step (Vite's declarations do the same).
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const optional = Object.entries(manifest.peerDependenciesMeta ?? {})
  .filter(([, meta]) => meta.optional === true)
  .map(([name]) => name);
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const importsOptional = new RegExp(
  `(?:from |import\\()"(?:${optional.map(escapeRegExp).join("|")})(?:/[^"]*)?"`,
);
const MARK = "// @ts-ignore an optional peer dependency: `any` when it is not installed";

const declarations = (directory) =>
  readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return declarations(path);
    return entry.name.endsWith(".d.ts") ? [path] : [];
  });

let marked = 0;
for (const file of declarations(new URL("dist", root).pathname)) {
  const lines = readFileSync(file, "utf8").split("\n");
  const out = [];
  for (const [index, line] of lines.entries()) {
    if (importsOptional.test(line) && lines[index - 1]?.trim() !== MARK) {
      out.push(`${/^\s*/.exec(line)[0]}${MARK}`);
      marked += 1;
    }
    out.push(line);
  }
  if (out.length !== lines.length) writeFileSync(file, out.join("\n"));
}
process.stderr.write(`mark-optional-types: ${marked} import(s) of optional peer types marked\n`);
