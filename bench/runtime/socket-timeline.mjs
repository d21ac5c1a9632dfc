// Prints a socket trace (bench/runtime/socket-trace.mjs) as a timeline: µs since the first entry
// shown, µs since the entry before, the connection's local port, and what was written (the
// commands of one system call) or read (bytes).
//
//   HARNESSX_BENCH_CHILD_FLAGS="--import ./bench/runtime/socket-trace.mjs" \
//     node bench/runtime/profile.mjs sequential 400
//   node bench/runtime/socket-timeline.mjs /tmp/socket-trace.<pid>.json [from=20000] [count=120]
import { readFileSync } from "node:fs";

const [file, from = "20000", count = "120"] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write("usage: socket-timeline.mjs <socket-trace.json> [from] [count]\n");
  process.exit(2);
}
const entries = JSON.parse(readFileSync(file, "utf8")).slice(
  Number(from),
  Number(from) + Number(count),
);
const start = entries[0]?.[0] ?? 0;
let previous = start;
for (const [at, port, kind, detail] of entries) {
  const what =
    kind === "write" ? `write ${detail.length}: ${detail.join(" | ")}` : `read ${detail} B`;
  process.stdout.write(
    `${String(at - start).padStart(7)} ${`+${at - previous}`.padStart(6)} ${String(port).padStart(6)}  ${what.slice(0, 120)}\n`,
  );
  previous = at;
}
