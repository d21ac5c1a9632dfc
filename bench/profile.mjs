// Runs one implementation's 10-iteration run in a loop, for a CPU profile:
//   node --cpu-prof --cpu-prof-dir=/tmp/harnessx-profiles bench/profile.mjs [harnessx|handwritten|xstate-bare] [runs]
//   node bench/summarize-profile.mjs /tmp/harnessx-profiles/<file>.cpuprofile
const implementation = process.argv[2] ?? "harnessx";
const runs = Number(process.argv[3] ?? 5000);
const module = await import(`./implementations/${implementation}.mjs`);
const instance = module.create(10);
const begin = performance.now();
for (let index = 0; index < runs; index++) {
  const result = await instance.run();
  if (result.status !== "completed") throw new Error(`run ${index} ended ${result.status}`);
}
const elapsed = performance.now() - begin;
process.stderr.write(
  `[profile] ${implementation}: ${runs} runs of 10 iterations in ${elapsed.toFixed(0)} ms (${((elapsed * 1000) / runs).toFixed(1)} µs/run)\n`,
);
