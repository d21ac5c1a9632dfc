// What a sandbox call costs by tier, side by side in one process: a program run as the leader
// of a process group only (what the process tier did before it took a PID namespace), the
// process tier (a PID namespace of its own, through unshare) and the bubblewrap tier. Prints
// one JSON document to stdout: wall milliseconds per `bash -c true` call, median of the
// repetitions. Run with `npm run build && node bench/sandbox.mjs`.
//
// Options: --calls=<n> calls per variant per repetition (30), --repetitions=<n> (5).
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { runProcess } from "../dist/features/sandbox/run-process.js";
import { Sandbox } from "../dist/index.js";
import { median, option, round } from "./runtime/common.mjs";

const CALLS = option("calls", 30);
const REPETITIONS = option("repetitions", 5);
const loadAtStart = loadavg()[0];
const work = await mkdtemp(join(tmpdir(), "harnessx-bench-sandbox-"));

const groupOnly = async () => {
  const outcome = await runProcess({
    file: "/bin/bash",
    args: ["-c", "true"],
    cwd: work,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
    timeoutMs: 10_000,
    maxOutputBytes: 4_096,
  });
  return outcome.exitCode;
};
const tier = (name) => {
  const sandbox = new Sandbox({ tier: name, cwd: work, timeoutMs: 10_000 });
  return async () => (await sandbox.executeCommand("true")).exitCode;
};
const variants = {
  processGroupOnly: groupOnly,
  processTier: tier("process"),
  bubblewrapTier: tier("bubblewrap"),
};

try {
  // Settle each tier (its probes) before measuring.
  for (const [name, call] of Object.entries(variants)) {
    if ((await call()) !== 0) throw new Error(`${name}: the warm-up call failed`);
  }
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let repetition = 0; repetition < REPETITIONS; repetition++) {
    for (const [name, call] of Object.entries(variants)) {
      const started = performance.now();
      for (let index = 0; index < CALLS; index++) {
        if ((await call()) !== 0) throw new Error(`${name}: a call failed`);
      }
      samples[name].push((performance.now() - started) / CALLS);
    }
  }
  const results = Object.fromEntries(
    Object.entries(samples).map(([name, each]) => [
      name,
      {
        wallMsPerCall: round(median(each)),
        wallMsPerCallRepetitions: each.map((value) => round(value)),
      },
    ]),
  );
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: "sandbox: wall ms per `bash -c true` call, by tier",
        node: process.version,
        cpus: cpus().length,
        loadAverageAtStart: round(loadAtStart),
        runAsRoot: process.getuid?.() === 0,
        calls: CALLS,
        repetitions: REPETITIONS,
        results,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
