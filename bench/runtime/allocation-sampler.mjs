// Preloaded into a benchmark process (`--import`) by profile.mjs's heap mode: samples every
// allocation, kept or collected (unlike --heap-prof, which reports only what is still alive at
// exit), and writes a .heapprofile into HARNESSX_ALLOCATION_DIR when the process exits.
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";

const directory = process.env.HARNESSX_ALLOCATION_DIR;
if (directory !== undefined) {
  const session = new Session();
  session.connect();
  session.post("HeapProfiler.enable");
  session.post("HeapProfiler.startSampling", {
    samplingInterval: 8192,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // An in-thread session answers synchronously, so this works in an `exit` handler.
  process.on("exit", () => {
    session.post("HeapProfiler.stopSampling", (error, result) => {
      if (error) return;
      mkdirSync(directory, { recursive: true });
      const file = join(directory, `allocations.${process.pid}.heapprofile`);
      writeFileSync(file, JSON.stringify(result.profile));
    });
  });
}
