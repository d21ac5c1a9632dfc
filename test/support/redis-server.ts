// Starting and stopping a redis-server from PATH, for the test set-up and the tests that need a
// server of their own.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";

/**
 * Starts `redis-server` on 127.0.0.1:`port` with `options` (after the port and bind address);
 * resolves once it accepts connections, rejects when it cannot start.
 */
export async function launchRedisServer(
  port: number,
  options: readonly string[],
): Promise<ChildProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", ...options], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let output = "";
    child.once("error", (error) =>
      reject(new Error(`Could not start redis-server from PATH: ${error.message}`)),
    );
    child.once("exit", (code) =>
      reject(new Error(`redis-server exited (${String(code)}) before it was ready:\n${output}`)),
    );
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) resolve();
    });
  });
  return child;
}

/** Stops `child` with `signal` and waits for it to exit; nothing when it exited already. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill(signal);
  await exited;
}
