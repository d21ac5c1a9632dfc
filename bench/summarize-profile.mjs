// Summarises a .cpuprofile (from `node --cpu-prof`): self time by category (xstate, zod,
// harnessx, GC …), by function and by file, and inclusive time by function.
//   node bench/summarize-profile.mjs <file.cpuprofile> [top=30]
import { readFileSync } from "node:fs";

const [file, topArgument] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: summarize-profile.mjs <file.cpuprofile> [top]");
const top = Number(topArgument ?? 30);
const profile = JSON.parse(readFileSync(file, "utf8"));

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes)
  for (const child of node.children ?? []) parents.set(child, node.id);

// Sample counts → time: each sample lasts its timeDelta.
const selfMicros = new Map();
profile.samples.forEach((id, index) => {
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);

const shortUrl = (url) =>
  url === ""
    ? "(native)"
    : url
        .replace(/^file:\/\//, "")
        .replace(/^.*\/node_modules\//, "node_modules/")
        .replace(/^.*\/work\/main\//, "");
const keyOf = (node) => {
  const frame = node.callFrame;
  return `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
};

const categoryOf = (node) => {
  const { url, functionName } = node.callFrame;
  if (functionName === "(garbage collector)") return "garbage collector";
  if (url.includes("/node_modules/"))
    return url.replace(/^.*\/node_modules\/(@[^/]+\/[^/]+|[^/]+)\/.*$/, "$1");
  if (url.includes("/dist/")) return "harnessx (dist/)";
  if (url.includes("/bench/")) return "bench workload";
  if (url.startsWith("node:internal/modules") || url.startsWith("node:internal/deps"))
    return "module loading";
  if (url.startsWith("node:")) return url.replace(/^node:(internal\/)?/, "node:");
  return `(native) ${functionName}`;
};

process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const byCategory = new Map();
const bySelf = new Map();
const byFile = new Map();
const inclusive = new Map();
for (const [id, micros] of selfMicros) {
  const node = nodes.get(id);
  byCategory.set(categoryOf(node), (byCategory.get(categoryOf(node)) ?? 0) + micros);
  bySelf.set(keyOf(node), (bySelf.get(keyOf(node)) ?? 0) + micros);
  const url = shortUrl(node.callFrame.url);
  byFile.set(url, (byFile.get(url) ?? 0) + micros);
  // Inclusive: credit every distinct frame on the stack once.
  const seen = new Set();
  for (let at = id; at !== undefined; at = parents.get(at)) {
    const key = keyOf(nodes.get(at));
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + micros);
  }
}

const print = (title, map) => {
  process.stdout.write(`\n${title}\n`);
  const rows = [...map].sort((left, right) => right[1] - left[1]).slice(0, top);
  for (const [key, micros] of rows) {
    process.stdout.write(`${((100 * micros) / total).toFixed(1).padStart(6)}%  ${key}\n`);
  }
};
process.stdout.write(`total sampled: ${(total / 1000).toFixed(0)} ms\n`);
print("self time by category", byCategory);
print("self time by function", bySelf);
print("self time by file", byFile);
print("inclusive time by function", inclusive);
