// Preloaded into a benchmark child (`--import`, through HARNESSX_BENCH_CHILD_FLAGS): records
// every socket write (each a system call: one command or a coalesced batch) and every chunk read,
// with a µs clock, the local port naming the connection, and the commands a write carries. At
// exit it writes `socket-trace.<pid>.json` into HARNESSX_SOCKET_TRACE_DIR (default: the OS temp
// folder). bench/runtime/socket-timeline.mjs prints it. Unlike profile.mjs's round-trips mode, it
// adds next to nothing to a run's latency, so the gaps it shows are the process's own.
import { writeFileSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LIMIT = 500_000;
const entries = [];
const clock = () => Number(process.hrtime.bigint() / 1000n);

/** `evalsha 1a2b3c4d` or `bzpopmin hx:steps:…`: a RESP command's name and first argument. */
function commandOf(chunk) {
  const text =
    typeof chunk === "string"
      ? chunk
      : Buffer.isBuffer(chunk)
        ? chunk.toString("latin1", 0, 200)
        : "";
  const match = /^\*\d+\r\n\$\d+\r\n([^\r]+)\r\n(?:\$\d+\r\n([^\r]+)\r\n)?/.exec(text);
  return match === null ? "?" : `${match[1]} ${(match[2] ?? "").slice(0, 24)}`.trim();
}

const record = (socket, kind, detail) => {
  if (entries.length < LIMIT) entries.push([clock(), socket.localPort ?? 0, kind, detail]);
};

const { _write: write, _writev: writev, push } = Socket.prototype;
Socket.prototype._write = function (chunk, encoding, callback) {
  record(this, "write", [commandOf(chunk)]);
  return write.call(this, chunk, encoding, callback);
};
Socket.prototype._writev = function (chunks, callback) {
  record(
    this,
    "write",
    chunks.map(({ chunk }) => commandOf(chunk)),
  );
  return writev.call(this, chunks, callback);
};
Socket.prototype.push = function (chunk, encoding) {
  if (chunk != null) record(this, "read", chunk.length);
  return push.call(this, chunk, encoding);
};

process.on("exit", () => {
  const directory = process.env.HARNESSX_SOCKET_TRACE_DIR ?? tmpdir();
  writeFileSync(join(directory, `socket-trace.${process.pid}.json`), JSON.stringify(entries));
});
