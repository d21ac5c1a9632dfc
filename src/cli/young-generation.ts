import { spawn } from "node:child_process";
import { constants } from "node:os";

// A worker allocates many short-lived objects a run (records, snapshots, commands, promises)
// while dozens of runs are in flight, so with Node's default young generation a scavenge comes
// every few dozen runs and copies every run still in flight. A larger semi-space lets more of
// them die young: about a tenth less worker CPU a run (docs/perf-history.md, "Runtime"). V8 sizes
// its heap when the process starts, so the flag only takes effect on a new process.

/** The semi-space (MB) of a `harnessx worker` process, unless its node flags set one. */
export const WORKER_SEMI_SPACE_MB = 32;

const FLAG = "--max-semi-space-size";
/** Marks the process `relaunchWithSemiSpace` started (read once, then removed). */
const RELAUNCHED = "HARNESSX_RELAUNCHED_WORKER";

/**
 * True when `harnessx worker` should start itself again with the worker's semi-space: no node
 * flag or `NODE_OPTIONS` sets one, and the platform passes SIGINT and SIGTERM on as signals
 * (Windows ends a child on `kill` at once, so a worker there keeps this process).
 */
export function wantsRelaunch(platform: NodeJS.Platform = process.platform): boolean {
  return platform !== "win32" && semiSpaceFlag() === undefined;
}

/**
 * The semi-space size (MB) the process's node flags or `NODE_OPTIONS` set, the last one given
 * (V8 takes `_` for `-` in a flag's name, and the size after `=` or as the next word);
 * undefined when none does.
 */
export function semiSpaceFlag(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): number | undefined {
  const words = [...execArgv, ...nodeOptions.split(/\s+/)];
  let megabytes: number | undefined;
  words.forEach((word, at) => {
    const [name, value = words[at + 1]] = word.split("=", 2);
    if (name?.replaceAll("_", "-") === FLAG) megabytes = Number(value);
  });
  return megabytes;
}

/**
 * Runs this command again in a child process whose `NODE_OPTIONS` add the worker's semi-space,
 * and resolves with the child's exit code (128 + the signal's number when a signal ended it).
 * The child runs in a process group of its own, so that a signal reaches it once: SIGINT and
 * SIGTERM sent to this process (a terminal's Ctrl-C, `docker stop`, `kill`) are passed on to
 * it. Should this process die, the child stops as on SIGTERM (`whenParentDies`).
 */
export function relaunchWithSemiSpace(megabytes: number = WORKER_SEMI_SPACE_MB): Promise<number> {
  const [, script, ...args] = process.argv;
  const nodeOptions = `${process.env.NODE_OPTIONS ?? ""} ${FLAG}=${megabytes}`.trim();
  const child = spawn(process.execPath, [...process.execArgv, script ?? "", ...args], {
    stdio: ["inherit", "inherit", "inherit", "ipc"],
    detached: true,
    env: { ...process.env, NODE_OPTIONS: nodeOptions, [RELAUNCHED]: "1" },
  });
  const pass = (signal: NodeJS.Signals) => {
    child.kill(signal);
  };
  process.on("SIGINT", pass);
  process.on("SIGTERM", pass);
  return new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      process.off("SIGINT", pass);
      process.off("SIGTERM", pass);
      resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
    });
  });
}

/**
 * In a process `relaunchWithSemiSpace` started: resolves once the parent has died (its IPC
 * channel closed, before this was called too), and lets the process exit without the channel.
 * Elsewhere it never resolves. Call it once, early: it takes the relaunch mark out of the
 * environment, so that processes this one starts do not inherit it.
 */
export function whenParentDies(): Promise<void> {
  const relaunched = process.env[RELAUNCHED] === "1";
  delete process.env[RELAUNCHED];
  if (!relaunched) return new Promise<void>(() => {});
  if (!process.connected) return Promise.resolve();
  process.channel?.unref();
  return new Promise<void>((resolve) => {
    process.once("disconnect", () => resolve());
  });
}
