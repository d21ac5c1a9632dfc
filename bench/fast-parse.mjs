// Does src/store/fast-parse.ts still earn its keep? The worker's CPU per run with it ("fast")
// and with zod's own parse in its place ("zod", bench/runtime/zod-only-hook.mjs), side by side:
// `bench/runtime/profile.mjs cpu <runs>` on one harnessx worker process, the two sides taking
// turns, five times each. Prints one JSON document: each side's medians and every sample, and
// the share of the worker's CPU the fast path saves ((zod − fast) / zod).
//   npm run build && node bench/fast-parse.mjs [runs=2000] [repetitions=5]
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const runs = Number(process.argv[2] ?? 2000);
const repetitions = Number(process.argv[3] ?? 5);
const profile = fileURLToPath(new URL("./runtime/profile.mjs", import.meta.url));
const hook = new URL("./runtime/zod-only-hook.mjs", import.meta.url).href;

/** One `profile.mjs cpu` run: the harnessx worker's CPU per run, and runs per second. */
async function sample(side) {
  const nodeOptions = side === "zod" ? `--import ${hook}` : "";
  const { stdout } = await run(process.execPath, [profile, "cpu", String(runs)], {
    env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} ${nodeOptions}` },
    maxBuffer: 16 * 1024 * 1024,
  });
  const result = JSON.parse(stdout);
  return {
    workerCpuMsPerRun: result.harnessxPerRun.cpuMs.worker,
    submitterCpuMsPerRun: result.harnessxPerRun.cpuMs.submitter,
    runsPerSecond: result.harnessxPerRun.runsPerSecond,
  };
}

const median = (values) => {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const samples = { fast: [], zod: [] };
for (let index = 0; index < repetitions; index++) {
  // Taking turns, the first side alternating, so that a slow spell of a shared host falls on both.
  const order = index % 2 === 0 ? ["fast", "zod"] : ["zod", "fast"];
  for (const side of order) {
    const result = await sample(side);
    samples[side].push(result);
    process.stderr.write(
      `[fast-parse] ${side} ${index + 1}/${repetitions}: ${JSON.stringify(result)}\n`,
    );
  }
}

const summary = (side) => ({
  workerCpuMsPerRun: median(samples[side].map((each) => each.workerCpuMsPerRun)),
  submitterCpuMsPerRun: median(samples[side].map((each) => each.submitterCpuMsPerRun)),
  runsPerSecond: median(samples[side].map((each) => each.runsPerSecond)),
});
const fast = summary("fast");
const zod = summary("zod");
const saved = (zod.workerCpuMsPerRun - fast.workerCpuMsPerRun) / zod.workerCpuMsPerRun;
console.log(
  JSON.stringify(
    {
      runs,
      repetitions,
      fast,
      zod,
      workerCpuShareSaved: Math.round(saved * 1000) / 1000,
      keep: saved >= 0.05,
      samples,
    },
    null,
    2,
  ),
);
