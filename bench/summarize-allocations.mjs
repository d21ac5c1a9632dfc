// Summarises a .heapprofile of allocations (bench/runtime/allocation-sampler.mjs, or any V8
// sampling heap profile): bytes allocated by category (xstate, ioredis, harnessx …), by
// function (self), by file, and inclusive by function; with `runs`, also per run.
//   node bench/summarize-allocations.mjs <file.heapprofile> [top=30] [runs]
import { readFileSync } from "node:fs";

const [file, topArgument, runsArgument] = process.argv.slice(2);
if (file === undefined) {
  throw new Error("usage: summarize-allocations.mjs <file.heapprofile> [top] [runs]");
}
const top = Number(topArgument ?? 30);
const runs = runsArgument === undefined ? undefined : Number(runsArgument);
const profile = JSON.parse(readFileSync(file, "utf8"));

const shortUrl = (url) =>
  url === ""
    ? "(native)"
    : url
        .replace(/^file:\/\//, "")
        .replace(/^.*\/node_modules\//, "node_modules/")
        .replace(/^.*\/(dist|bench)\//, "$1/");
const keyOf = (frame) =>
  `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
const categoryOf = ({ url, functionName }) => {
  if (url.includes("/node_modules/"))
    return url.replace(/^.*\/node_modules\/(@[^/]+\/[^/]+|[^/]+)\/.*$/, "$1");
  if (url.includes("/dist/")) return "harnessx (dist/)";
  if (url.includes("/bench/")) return "bench workload";
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
const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
let total = 0;
// Depth first, with the stack of frame keys above each node.
const walk = (node, stack) => {
  const key = keyOf(node.callFrame);
  const fresh = !stack.includes(key);
  const here = fresh ? [...stack, key] : stack;
  if (node.selfSize > 0) {
    total += node.selfSize;
    add(byCategory, categoryOf(node.callFrame), node.selfSize);
    add(bySelf, key, node.selfSize);
    add(byFile, shortUrl(node.callFrame.url), node.selfSize);
    for (const each of here) add(inclusive, each, node.selfSize);
  }
  for (const child of node.children) walk(child, here);
};
walk(profile.head, []);

const print = (title, map) => {
  process.stdout.write(`\n${title}\n`);
  const rows = [...map].sort((left, right) => right[1] - left[1]).slice(0, top);
  for (const [key, bytes] of rows) {
    const perRun =
      runs === undefined ? "" : `${(bytes / runs / 1024).toFixed(1).padStart(8)} KB/run`;
    process.stdout.write(`${((100 * bytes) / total).toFixed(1).padStart(6)}% ${perRun}  ${key}\n`);
  }
};
const perRun = runs === undefined ? "" : `, ${(total / runs / 1024).toFixed(1)} KB a run`;
process.stdout.write(`total sampled: ${(total / 1024 / 1024).toFixed(1)} MB${perRun}\n`);
print("allocated by category", byCategory);
print("allocated by function (self)", bySelf);
print("allocated by file", byFile);
print("allocated inclusive by function", inclusive);
