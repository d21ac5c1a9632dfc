// Child processes of the benchmarks: forked with a small request/reply protocol over IPC.
import { fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { REDIS_URL } from "./redis.mjs";

/**
 * Extra Node flags for every child process, from `HARNESSX_BENCH_CHILD_FLAGS` (space-separated):
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`, which NODE_OPTIONS does not take.
 */
function childFlags() {
  return (process.env.HARNESSX_BENCH_CHILD_FLAGS ?? "").split(" ").filter(Boolean);
}

/**
 * A child process speaking a small request/reply protocol over IPC: `request(type, body)`
 * sends `{ type, ...body }` and resolves with the child's next message of the same type.
 */
export async function spawnChild(script, args = [], { expectReady = true, execArgv = [] } = {}) {
  const child = fork(fileURLToPath(script), args, {
    execArgv: ["--expose-gc", ...execArgv, ...childFlags()],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: { ...process.env, REDIS_URL },
  });
  const waiting = new Map();
  const listeners = new Set();
  child.on("message", (message) => {
    for (const listener of listeners) listener(message);
    const queue = waiting.get(message.type);
    const next = queue?.shift();
    if (next) next(message);
  });
  const exited = once(child, "exit");
  const handle = {
    child,
    exited,
    next(type) {
      return new Promise((resolve, reject) => {
        const queue = waiting.get(type) ?? [];
        queue.push(resolve);
        waiting.set(type, queue);
        exited.then(([code]) => reject(new Error(`${script} exited (${code}) before "${type}"`)));
      });
    },
    async request(type, body = {}) {
      const reply = handle.next(type);
      child.send({ type, ...body });
      return reply;
    },
    onMessage(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      if (child.exitCode !== null) return;
      child.send({ type: "close" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  if (expectReady) await handle.next("ready");
  return handle;
}

/** In a child: answers parent requests with `handlers[type](message)`. */
export function serve(handlers) {
  process.on("message", async (message) => {
    const handler = handlers[message.type];
    if (handler === undefined) return;
    try {
      const reply = await handler(message);
      process.send({ type: message.type, ...(reply ?? {}) });
    } catch (error) {
      process.stderr.write(`child ${message.type} failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    }
  });
  // A parent that dies takes its children with it.
  process.on("disconnect", () => process.exit(0));
}

/** Heap after a forced GC (children run with --expose-gc). */
export function settledHeap() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}
