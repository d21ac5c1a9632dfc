// Issue 32: what `import "harnessx"` costs a fresh process, side by side with a bare `node` and
// with importing `xstate` and `zod` alone (the floor: the core cannot load less). Each sample is
// a fresh node process; the three cases alternate within every round so that drift on a shared
// host falls on all alike. Prints one JSON document to stdout; progress goes to stderr.
//
//   npm run --silent bench:import          # builds first
//   node bench/import.mjs --rounds=5 --modules   # also lists the packages each case loaded
//   node bench/import.mjs --baseline=/elsewhere/dist/index.js   # another build, side by side
//
// "harnessxFirstRun" imports the package and completes one direct run (a scripted provider from
// harnessx/testing): what a CLI or a cold serverless function pays before its first answer, now
// that pino, the OpenTelemetry API and the schemas load on first use ("baselineFirstRun" the
// same for --baseline, its testing.js next to its index.js).
//
// Wall time is measured by this process around the child's whole life (start to exit); CPU
// time is the child's own (user + system), steadier than wall time on a busy shared host; RSS
// is the child's peak resident set (`process.resourceUsage().maxRSS`) after its import.
// Targets (SPEC §15): harnessx's wall time over bare node at most 1.25x the floor's, its added
// RSS at most the floor's + 5 MB.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";

const option = (name, fallback) => {
  const found = process.argv.find((each) => each.startsWith(`--${name}=`));
  const value = found === undefined ? fallback : Number(found.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name} must be a positive integer.`);
  return value;
};
const ROUNDS = option("rounds", 5);
const LIST_MODULES = process.argv.includes("--modules");
const BASELINE = process.argv.find((each) => each.startsWith("--baseline="))?.slice(11);
const TIME_RATIO_TARGET = 1.25;
const RSS_MARGIN_TARGET_MB = 5;

const root = fileURLToPath(new URL("..", import.meta.url));
const entry = new URL("../dist/index.js", import.meta.url);
const testingEntry = new URL("../dist/testing.js", import.meta.url);
if (!existsSync(entry)) throw new Error("dist/index.js is missing: run `npm run build` first.");

const log = (line) => process.stderr.write(`[bench:import] ${line}\n`);

// The child prints its peak RSS (and, with --modules, the packages whose CommonJS or ESM
// modules it loaded) as one JSON line.
const report = `
const { createRequire } = await import("node:module");
const loaded = ${LIST_MODULES} ? Object.keys(createRequire(import.meta.url).cache) : [];
const { user, system } = process.cpuUsage();
process.stdout.write(JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS, cpuMs: (user + system) / 1000, loaded }) + "\\n");`;

const firstRun = (index, testing) => `
const { Agent } = await import(${JSON.stringify(index)});
const { ScriptedProvider, textResponse } = await import(${JSON.stringify(testing)});
const result = await new Agent({ provider: new ScriptedProvider([textResponse("ok")]) }).run("go");
if (result.output !== "ok") throw new Error("the first run did not complete: " + result.status);`;
const baselineUrl = BASELINE === undefined ? undefined : pathToFileURL(BASELINE);
const CASES = {
  bareNode: "",
  floor: 'await import("xstate"); await import("zod");',
  harnessx: `await import(${JSON.stringify(entry.href)});`,
  harnessxFirstRun: firstRun(entry.href, testingEntry.href),
  ...(baselineUrl === undefined
    ? {}
    : {
        baseline: `await import(${JSON.stringify(baselineUrl.href)});`,
        baselineFirstRun: firstRun(baselineUrl.href, new URL("testing.js", baselineUrl).href),
      }),
};

function sample(code) {
  const began = performance.now();
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", `${code}\n${report}`], {
    cwd: root,
    encoding: "utf8",
  });
  const wallMs = performance.now() - began;
  if (child.status !== 0) throw new Error(`a child failed (${child.status}): ${child.stderr}`);
  const { maxRssKb, cpuMs, loaded } = JSON.parse(child.stdout.trim().split("\n").at(-1));
  return { wallMs, cpuMs, rssMb: maxRssKb / 1024, loaded };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const round = (value, places = 1) => Number(value.toFixed(places));
const packagesOf = (files) => [
  ...new Set(
    files.flatMap((file) => {
      const match = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file);
      return match === null ? [] : [match[1]];
    }),
  ),
];

const samples = Object.fromEntries(Object.keys(CASES).map((name) => [name, []]));
const loadedBy = {};
for (const code of Object.values(CASES)) sample(code); // warm the file cache
for (let index = 0; index < ROUNDS; index += 1) {
  for (const [name, code] of Object.entries(CASES)) {
    const result = sample(code);
    samples[name].push(result);
    loadedBy[name] = packagesOf(result.loaded);
  }
  log(`round ${index + 1}/${ROUNDS}`);
}

const figures = Object.fromEntries(
  Object.entries(samples).map(([name, each]) => [
    name,
    {
      wallMs: round(median(each.map((one) => one.wallMs))),
      cpuMs: round(median(each.map((one) => one.cpuMs))),
      rssMb: round(median(each.map((one) => one.rssMb))),
    },
  ]),
);
const over = (name) => ({
  wallMs: round(figures[name].wallMs - figures.bareNode.wallMs),
  cpuMs: round(figures[name].cpuMs - figures.bareNode.cpuMs),
  rssMb: round(figures[name].rssMb - figures.bareNode.rssMb),
});
const floor = over("floor");
const harnessx = over("harnessx");
const timeRatio = round(harnessx.wallMs / floor.wallMs, 2);
const cpuRatio = round(harnessx.cpuMs / floor.cpuMs, 2);
const result = {
  bench: "import",
  node: process.version,
  cpus: cpus().length,
  loadAverage: round(loadavg()[0], 2),
  rounds: ROUNDS,
  medians: figures,
  overBareNode: {
    floor,
    harnessx,
    harnessxFirstRun: over("harnessxFirstRun"),
    ...(BASELINE === undefined
      ? {}
      : { baseline: over("baseline"), baselineFirstRun: over("baselineFirstRun") }),
  },
  timeRatio,
  cpuRatio,
  timeRatioTarget: TIME_RATIO_TARGET,
  rssOverFloorMb: round(harnessx.rssMb - floor.rssMb),
  rssOverFloorTargetMb: RSS_MARGIN_TARGET_MB,
  met: timeRatio <= TIME_RATIO_TARGET && harnessx.rssMb - floor.rssMb <= RSS_MARGIN_TARGET_MB,
  ...(LIST_MODULES ? { commonJsPackagesLoaded: loadedBy } : {}),
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
