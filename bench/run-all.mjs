// Issue 2: the per-iteration overhead of a direct harnessx run, side by side with a hand-written
// loop and a bare XState loop, in one process. Prints one JSON document to stdout; progress
// goes to stderr. Run with `npm run bench` (it builds first). See bench/README.md.
//
// Options: --runs=<n> runs per timed batch (2000), --repetitions=<n> (5),
// --heap-runs=<n> retained runs per heap measurement (1000), --baseline=<other>/dist/index.js
// another build of harnessx, measured interleaved with this one ("harnessx-baseline").
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, option, round } from "./lib/stats.mjs";

// Heap figures need a forced GC: re-spawn with --expose-gc when it is missing.
if (typeof globalThis.gc !== "function") {
  const child = spawnSync(
    process.execPath,
    ["--expose-gc", fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: "inherit" },
  );
  process.exit(child.status ?? 1);
}

const BASELINE = process.argv.find((each) => each.startsWith("--baseline="))?.slice(11);
const implementations = await Promise.all([
  import("./implementations/harnessx.mjs"),
  import("./implementations/handwritten.mjs"),
  import("./implementations/xstate-bare.mjs"),
]);
if (BASELINE !== undefined) {
  const [harnessx, other] = await Promise.all([
    import("./implementations/harnessx.mjs"),
    import(pathToFileURL(BASELINE).href),
  ]);
  implementations.push({
    name: "harnessx-baseline",
    create: (toolIterations) => harnessx.createWith(other, toolIterations),
  });
}
const { counters, expectedCounts, HOOK_EVENTS, MIDDLEWARE_COUNT, resetCounters } = await import(
  "./workload.mjs"
);

const SHORT = 1; // tool iterations of the short run
const LONG = 10; // tool iterations of the long run
const RUNS = option("runs", 2000);
const REPETITIONS = option("repetitions", 5);
const HEAP_RUNS = option("heap-runs", 1000);
const CHUNK = 50; // runs per alternation between the two sizes
const HEAP_ROUNDS = 3;
const WARMUP_RUNS = Math.max(200, Math.round(RUNS / 4));
const WARMUP_MS = 1000; // the hand-written loop needs time, not runs, for the JIT to settle
const REFERENCE_XSTATE_BARE_US = 80;
const TARGET_US = 100;

const log = (line) => process.stderr.write(`[bench] ${line}\n`);
const started = performance.now();
// Other processes on the machine make every figure noisier; the load average says how much.
const loadAtStart = loadavg()[0];

const collect = () => {
  globalThis.gc();
  globalThis.gc();
};

function check(result, toolIterations, implementation) {
  if (result.status !== "completed" || result.iterations !== toolIterations + 1) {
    throw new Error(
      `${implementation}: expected a completed run of ${toolIterations + 1} provider calls, got ${result.status} after ${result.iterations} (${JSON.stringify(result.error)})`,
    );
  }
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/**
 * Microseconds for `runs` sequential runs: wall clock, and the process's CPU time (on a host
 * shared with other work the wall clock counts the time others ran; CPU time counts this
 * process's work, its GC threads' included).
 */
async function time(instance, runs, toolIterations, implementation) {
  const cpuBegin = cpuMicros();
  const begin = process.hrtime.bigint();
  for (let index = 0; index < runs; index++) {
    check(await instance.run(), toolIterations, implementation);
  }
  const wall = Number(process.hrtime.bigint() - begin) / 1000;
  return { wall, cpu: cpuMicros() - cpuBegin };
}

/**
 * One repetition of one implementation: RUNS short and RUNS long runs, alternating in chunks of
 * CHUNK so that a burst of noise (another process, a GC) lands on both sizes alike.
 */
async function measure({ name, short, long }) {
  collect();
  let shortUs = 0;
  let longUs = 0;
  let shortCpuUs = 0;
  let longCpuUs = 0;
  for (let done = 0; done < RUNS; done += CHUNK) {
    const runs = Math.min(CHUNK, RUNS - done);
    const longTimes = await time(long, runs, LONG, name);
    const shortTimes = await time(short, runs, SHORT, name);
    longUs += longTimes.wall;
    shortUs += shortTimes.wall;
    longCpuUs += longTimes.cpu;
    shortCpuUs += shortTimes.cpu;
  }
  return {
    perIteration: (longUs - shortUs) / RUNS / (LONG - SHORT),
    cpuPerIteration: (longCpuUs - shortCpuUs) / RUNS / (LONG - SHORT),
    perShortRun: shortUs / RUNS,
    perLongRun: longUs / RUNS,
  };
}

/** Heap bytes each finished run keeps alive while its result is retained. */
async function heapPerRun(instance, toolIterations, implementation) {
  const retained = [];
  collect();
  const before = process.memoryUsage().heapUsed;
  for (let index = 0; index < HEAP_RUNS; index++) {
    const result = await instance.run();
    check(result, toolIterations, implementation);
    retained.push(result);
  }
  collect();
  const after = process.memoryUsage().heapUsed;
  if (retained.length !== HEAP_RUNS) throw new Error("unreachable");
  return (after - before) / HEAP_RUNS;
}

const instances = implementations.map((module) => ({
  name: module.name,
  short: module.create(SHORT),
  long: module.create(LONG),
}));

// Sanity: harnessx and the hand-written loop do the same middleware and hook work per run.
for (const { name, long } of instances) {
  resetCounters();
  const result = await long.run();
  check(result, LONG, name);
  const expected = name === "xstate-bare" ? { middleware: 0, hooks: 0 } : expectedCounts(LONG);
  if (counters.middleware !== expected.middleware || counters.hooks !== expected.hooks) {
    throw new Error(
      `${name}: a run of ${LONG} iterations ran ${counters.middleware} middleware stages and ${counters.hooks} hooks; expected ${expected.middleware} and ${expected.hooks}.`,
    );
  }
  const messages = result.messages.length;
  if (messages !== 2 * LONG + 2)
    throw new Error(`${name}: ${messages} messages, expected ${2 * LONG + 2}.`);
}
log("sanity check passed: same middleware and hook work per run in harnessx and handwritten");

log(`warm-up: at least ${WARMUP_RUNS} runs of each size and ${WARMUP_MS} ms per implementation`);
for (const { name, short, long } of instances) {
  const warmUpStarted = performance.now();
  for (let done = 0; done < WARMUP_RUNS || performance.now() - warmUpStarted < WARMUP_MS; ) {
    await time(short, CHUNK, SHORT, name);
    await time(long, CHUNK, LONG, name);
    done += CHUNK;
  }
}
collect();

const samples = new Map(instances.map(({ name }) => [name, []]));
for (let repetition = 1; repetition <= REPETITIONS; repetition++) {
  // Interleaved (a, b, c, a, b, c …); the starting implementation rotates each repetition.
  for (let offset = 0; offset < instances.length; offset++) {
    const instance = instances[(repetition - 1 + offset) % instances.length];
    const { name } = instance;
    const sample = await measure(instance);
    samples.get(name).push(sample);
    log(
      `repetition ${repetition}/${REPETITIONS} ${name}: ${sample.perIteration.toFixed(1)} µs/iteration, ${sample.cpuPerIteration.toFixed(1)} µs CPU (run of ${SHORT}: ${sample.perShortRun.toFixed(1)} µs, run of ${LONG}: ${sample.perLongRun.toFixed(1)} µs)`,
    );
  }
}

// Heap: median of HEAP_ROUNDS interleaved measurements (one alone is noisy by a few hundred bytes).
const heapSamples = new Map(instances.map(({ name }) => [name, { short: [], long: [] }]));
for (let round = 1; round <= HEAP_ROUNDS; round++) {
  for (const { name, short, long } of instances) {
    heapSamples.get(name).short.push(await heapPerRun(short, SHORT, name));
    heapSamples.get(name).long.push(await heapPerRun(long, LONG, name));
  }
  log(`heap round ${round}/${HEAP_ROUNDS} done`);
}
const heap = new Map();
for (const { name } of instances) {
  const { short, long } = heapSamples.get(name);
  heap.set(name, {
    [`run${SHORT}`]: Math.round(median(short)),
    [`run${LONG}`]: Math.round(median(long)),
  });
  log(`heap ${name}: ${JSON.stringify(heap.get(name))} bytes per retained run`);
}

const results = {};
for (const { name } of instances) {
  const list = samples.get(name);
  results[name] = {
    usPerIteration: round(median(list.map((each) => each.perIteration))),
    usPerIterationRepetitions: list.map((each) => round(each.perIteration)),
    cpuUsPerIteration: round(median(list.map((each) => each.cpuPerIteration))),
    cpuUsPerIterationRepetitions: list.map((each) => round(each.cpuPerIteration)),
    usPerRun: {
      [`run${SHORT}`]: round(median(list.map((each) => each.perShortRun))),
      [`run${LONG}`]: round(median(list.map((each) => each.perLongRun))),
    },
    heapBytesPerRun: heap.get(name),
  };
}

const require = createRequire(import.meta.url);
const versionOf = (path) => JSON.parse(readFileSync(path, "utf8")).version;
const harnessx = results.harnessx.usPerIteration;

process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: "harnessx per-iteration overhead, direct run (issue 2)",
      environment: {
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        cpu: cpus()[0]?.model ?? "unknown",
        cpuCount: cpus().length,
        harnessx: versionOf(new URL("../package.json", import.meta.url)),
        xstate: versionOf(require.resolve("xstate/package.json")),
        loadAverage1m: { start: round(loadAtStart), end: round(loadavg()[0]) },
      },
      workload: {
        iteration: "one provider call requesting one tool call + that tool call",
        provider: "ScriptedProvider, zero latency, loop: true",
        tool: "noop: input z.object({ query: z.string() }), handler returns 'ok'",
        middleware: `${MIDDLEWARE_COUNT} plain objects, four async identity stages each (not in xstate-bare)`,
        hooks: `${HOOK_EVENTS.join(", ")}: no-op observers (not in xstate-bare)`,
        runs: `run${SHORT} = ${SHORT} tool iteration + final answer; run${LONG} = ${LONG} tool iterations + final answer`,
        usPerIteration: `(time(run${LONG}) - time(run${SHORT})) / ${LONG - SHORT}, median of ${REPETITIONS} interleaved repetitions of ${RUNS} runs of each size (alternating in chunks of ${CHUNK})`,
        cpuUsPerIteration:
          "the same, in the process's CPU time (process.cpuUsage, GC threads included)",
        heapBytesPerRun: `heapUsed delta after forced GC / ${HEAP_RUNS} retained RunResults, median of ${HEAP_ROUNDS}`,
      },
      results,
      ratios: {
        harnessxOverHandwritten: round(harnessx / results.handwritten.usPerIteration),
        harnessxOverXstateBare: round(harnessx / results["xstate-bare"].usPerIteration),
        harnessxOverXstateBareCpu: round(
          results.harnessx.cpuUsPerIteration / results["xstate-bare"].cpuUsPerIteration,
        ),
        ...(BASELINE === undefined
          ? {}
          : {
              baseline: BASELINE,
              baselineOverXstateBare: round(
                results["harnessx-baseline"].usPerIteration / results["xstate-bare"].usPerIteration,
              ),
              baselineOverXstateBareCpu: round(
                results["harnessx-baseline"].cpuUsPerIteration /
                  results["xstate-bare"].cpuUsPerIteration,
              ),
              harnessxOverBaselineCpu: round(
                results.harnessx.cpuUsPerIteration / results["harnessx-baseline"].cpuUsPerIteration,
              ),
            }),
      },
      target: {
        harnessxUsPerIteration: TARGET_US,
        met: harnessx <= TARGET_US,
        issueReferenceXstateBareUsPerIteration: REFERENCE_XSTATE_BARE_US,
      },
      durationSeconds: round((performance.now() - started) / 1000, 1),
    },
    null,
    2,
  )}\n`,
);
