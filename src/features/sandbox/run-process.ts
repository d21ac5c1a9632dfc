import { CappedOutput } from "./capped-output.js";

// How long output pipes are still read after the group was killed at a timeout or an abort.
const STRAGGLER_GRACE_MS = 1_000;

/** One program to run and the limits it runs under. */
export interface ProcessPlan {
  file: string;
  args: readonly string[];
  cwd: string;
  /** The program's whole environment. */
  env: Readonly<Record<string, string>>;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Aborting kills the process group, as a timeout does. */
  signal?: AbortSignal | undefined;
}

export interface ProcessOutcome {
  stdout: string;
  stderr: string;
  /** `null` when the program ended by a signal (a timeout or an abort included). */
  exitCode: number | null;
  timedOut: boolean;
}

/**
 * Runs a program as the leader of a new process group and waits for it. Whatever it started is
 * killed with it: at the timeout or abort (SIGKILL to the whole group), and when it exits (its
 * background children do not outlive the call).
 */
export function runProcess(plan: ProcessPlan): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    // node:child_process loads on the first command, not at import (SPEC §15).
    const child = process.getBuiltinModule("node:child_process").spawn(plan.file, plan.args, {
      cwd: plan.cwd,
      env: plan.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const stdout = new CappedOutput(plan.maxOutputBytes);
    const stderr = new CappedOutput(plan.maxOutputBytes);
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));

    let exited = false;
    let timedOut = false;
    let exitCode: number | null = null;
    let settled = false;
    let straggler: NodeJS.Timeout | undefined;

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // ESRCH: the group is gone already.
      }
    };
    const stop = (reason: "timeout" | "abort") => {
      if (!exited && reason === "timeout") timedOut = true;
      killGroup();
      // What the killed group wrote is still read to its end; a process that left the group
      // (setsid) may hold the pipes open, so stop waiting for them after a grace period.
      straggler ??= setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, STRAGGLER_GRACE_MS);
    };
    const timer = setTimeout(() => stop("timeout"), plan.timeoutMs);
    const onAbort = () => stop("abort");
    plan.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = () => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(straggler);
      plan.signal?.removeEventListener("abort", onAbort);
    };

    child.on("exit", (code) => {
      exited = true;
      exitCode = code;
      killGroup();
    });
    child.on("error", (error) => {
      if (settled) return;
      finish();
      killGroup();
      reject(error);
    });
    child.on("close", () => {
      if (settled) return;
      finish();
      resolve({ stdout: stdout.text(), stderr: stderr.text(), exitCode, timedOut });
    });
    if (plan.signal?.aborted) onAbort();
  });
}
