// Issue 11: what the flight recorder costs a direct run, per iteration, measured with the
// recorder off, on, and on with a redact function, side by side in one process. Prints one JSON
// document to stdout; progress goes to stderr. Run with `npm run bench:recorder` (it builds
// first). See bench/README.md, section "Flight recorder".
//
// Options: --runs=<n> runs of each size per repetition (500), --repetitions=<n> (7).
import { cpus, loadavg } from "node:os";
import { FlightRecorder } from "../dist/index.js";
import { create as createHarnessx } from "./implementations/harnessx.mjs";
import { median, option, round } from "./lib/stats.mjs";

const SHORT = 1;
const LONG = 10;
const RUNS = option("runs", 500);
const REPETITIONS = option("repetitions", 7);
const CHUNK = 50;
const TARGET_OVERHEAD = 0.2;
const log = (line) => process.stderr.write(`[bench:recorder] ${line}\n`);
const loadAtStart = loadavg()[0];

/** The harnessx workload of bench/run-all.mjs, with an optional recorder; checks each run. */
function create(toolIterations, recorder) {
  const instance = createHarnessx(toolIterations, recorder === undefined ? {} : { recorder });
  return async () => {
    const result = await instance.run();
    if (result.status !== "completed" || result.iterations !== toolIterations + 1) {
      throw new Error(`expected a completed run, got ${result.status}`);
    }
    return result;
  };
}

const variants = [
  { name: "off", recorder: () => undefined },
  { name: "on", recorder: () => new FlightRecorder() },
  {
    name: "onRedacting",
    recorder: () => new FlightRecorder({ redact: (text) => text.replaceAll("sk-", "[key]-") }),
  },
].map((variant) => {
  const recorder = variant.recorder();
  return { ...variant, recorder, short: create(SHORT, recorder), long: create(LONG, recorder) };
});

// Sanity: the recording variants record every provider call and tool result of a run.
for (const variant of variants) {
  const result = await variant.long();
  if (variant.recorder === undefined) continue;
  const entries = await variant.recorder.entries(result.runId);
  const count = (type) => entries.filter((entry) => entry.type === type).length;
  if (count("llm_response_raw") !== LONG + 1 || count("tool_result_raw") !== LONG) {
    throw new Error(`${variant.name}: the recording misses entries (${entries.length} in all).`);
  }
}
log("sanity check passed: every provider call and tool result recorded");

/** Wall and CPU microseconds of `runs` sequential runs. */
async function time(run, runs) {
  const wallBegin = process.hrtime.bigint();
  const cpuBegin = process.cpuUsage();
  for (let index = 0; index < runs; index++) await run();
  const cpu = process.cpuUsage(cpuBegin);
  return { wall: Number(process.hrtime.bigint() - wallBegin) / 1000, cpu: cpu.user + cpu.system };
}

/**
 * One repetition: RUNS short and RUNS long runs of every variant, interleaved chunk by chunk
 * (the starting variant rotating), so that a burst of load from other processes lands on all
 * variants alike. CPU time (this process's own) is the headline: on a shared machine the wall
 * clock also counts the time other processes held the CPU.
 */
async function measureAll(repetition) {
  const totals = new Map(
    variants.map(({ name }) => [name, { shortWall: 0, longWall: 0, shortCpu: 0, longCpu: 0 }]),
  );
  for (let done = 0, chunk = 0; done < RUNS; done += CHUNK, chunk++) {
    const runs = Math.min(CHUNK, RUNS - done);
    for (let offset = 0; offset < variants.length; offset++) {
      const variant = variants[(repetition + chunk + offset) % variants.length];
      const total = totals.get(variant.name);
      const long = await time(variant.long, runs);
      const short = await time(variant.short, runs);
      total.longWall += long.wall;
      total.longCpu += long.cpu;
      total.shortWall += short.wall;
      total.shortCpu += short.cpu;
    }
  }
  const perIteration = (longUs, shortUs) => (longUs - shortUs) / RUNS / (LONG - SHORT);
  return new Map(
    [...totals].map(([name, total]) => [
      name,
      {
        cpuPerIteration: perIteration(total.longCpu, total.shortCpu),
        wallPerIteration: perIteration(total.longWall, total.shortWall),
      },
    ]),
  );
}

log("warm-up");
await measureAll(0);

const samples = new Map(variants.map(({ name }) => [name, []]));
for (let repetition = 1; repetition <= REPETITIONS; repetition++) {
  for (const [name, sample] of await measureAll(repetition)) {
    samples.get(name).push(sample);
    log(
      `repetition ${repetition}/${REPETITIONS} ${name}: ${sample.cpuPerIteration.toFixed(1)} µs CPU, ${sample.wallPerIteration.toFixed(1)} µs wall per iteration`,
    );
  }
}

const results = {};
for (const { name } of variants) {
  const list = samples.get(name);
  results[name] = {
    cpuUsPerIteration: round(median(list.map((each) => each.cpuPerIteration))),
    cpuUsPerIterationRepetitions: list.map((each) => round(each.cpuPerIteration)),
    wallUsPerIteration: round(median(list.map((each) => each.wallPerIteration))),
  };
}
const overhead = (name) =>
  round(results[name].cpuUsPerIteration / results.off.cpuUsPerIteration - 1, 3);
console.log(
  JSON.stringify(
    {
      benchmark: "flight recorder: direct-run cost per iteration, recorder off vs on",
      node: process.version,
      cpus: cpus().length,
      loadAverageAtStart: round(loadAtStart),
      runs: RUNS,
      repetitions: REPETITIONS,
      results,
      overhead: { on: overhead("on"), onRedacting: overhead("onRedacting") },
      targetOverhead: TARGET_OVERHEAD,
      withinTarget: overhead("on") <= TARGET_OVERHEAD,
    },
    null,
    2,
  ),
);
