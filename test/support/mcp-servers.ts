import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.js";

const installed = (name: string) =>
  fileURLToPath(
    new URL(`../../node_modules/@modelcontextprotocol/${name}/dist/index.js`, import.meta.url),
  );

/** The reference servers, installed as dev dependencies: spawned with node, never downloaded. */
export const EVERYTHING_SERVER = installed("server-everything");
export const MEMORY_SERVER = installed("server-memory");

/** A stdio server-everything; `marker` (an ignored extra argument) lets a test find its process. */
export const everythingOverStdio = (marker = "harnessx-test") => ({
  command: process.execPath,
  args: [EVERYTHING_SERVER, "stdio", marker],
  stderr: "ignore" as const,
});

/** Kills (SIGKILL) the child of this process whose command line contains `marker`. */
export function killChild(marker: string): void {
  const pids = execFileSync("pgrep", ["-P", String(process.pid), "-f", marker], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .filter(Boolean);
  if (pids.length !== 1) throw new Error(`expected one process "${marker}", found ${pids.length}`);
  process.kill(Number(pids[0]), "SIGKILL");
}

const childrenMatching = (marker: string): string[] => {
  try {
    return execFileSync("pgrep", ["-P", String(process.pid), "-f", marker], { encoding: "utf8" })
      .trim()
      .split("\n")
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
};

/**
 * Kills the child whose command line contains `marker` and waits until this process has reaped
 * it (it is no longer listed as a child), so the client has seen its connection close.
 */
export async function killChildAndWait(marker: string): Promise<void> {
  killChild(marker);
  while (childrenMatching(marker).length > 0) {
    await new Promise<void>((resolve) => setTimeout(resolve, 20));
  }
  // The child's `close` (which the MCP transport listens to) follows its reaping.
  await new Promise<void>((resolve) => setTimeout(resolve, 20));
}

export interface HttpServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything over streamable HTTP on a free port (or `port`: a restart), as its package starts it. */
export async function everythingOverHttp(port?: number): Promise<HttpServer> {
  port ??= await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let output = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`listening on port ${port}`)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}): ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
