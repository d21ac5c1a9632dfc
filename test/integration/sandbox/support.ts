import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "vitest";
import {
  HOOK_PAYLOADS,
  HookEvent,
  HookRegistry,
  type SandboxExecData,
  type SandboxResult,
} from "../../../src/index.js";
import { fixtureArgs } from "../../support/fixture-command.js";

const execFileAsync = promisify(execFile);

/** A fresh folder under the system temp folder; `remove()` deletes it. */
export async function scratchFolder(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "harnessx-sandbox-"));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A hook registry recording every SANDBOX_EXEC payload, each validated against HOOK_PAYLOADS. */
export function recordingHooks(): { hooks: HookRegistry; events: SandboxExecData[] } {
  const hooks = new HookRegistry();
  const events: SandboxExecData[] = [];
  hooks.on(HookEvent.SANDBOX_EXEC, (context) => {
    events.push(HOOK_PAYLOADS[HookEvent.SANDBOX_EXEC].parse(context.data));
  });
  return { hooks, events };
}

/** The event a call emitted agrees with the result it returned. */
export function expectReported(
  event: SandboxExecData | undefined,
  result: SandboxResult,
  expected: { kind: SandboxExecData["kind"]; tier: string },
): void {
  expect(event).toEqual({
    kind: expected.kind,
    tier: expected.tier,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    executionTimeMs: result.executionTimeMs,
  });
}

/** Pids of live (not zombie) `sleep <duration>` processes, seen from here. */
export function liveSleeps(duration: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [program, ...args] = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!program?.endsWith("sleep") || args[0] !== duration) continue;
      const state = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.[0];
      if (state !== "Z" && state !== "X") pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** What `test/fixtures/sandbox-command.ts` printed: the result and the uid it ran as. */
export type CommandOutcome = SandboxResult & { uid: number };

/** The uid and gid of `nobody`, the unprivileged user the tests switch to. */
export const NOBODY = 65534;

/**
 * Runs one sandbox command in a new Node.js process, whose environment is PATH, HOME and `env`
 * only; `{worker}` in the command stands for that process's pid. As `nobody`, it is switched
 * to with `setpriv`, which needs root (CI runs as root).
 */
export async function commandInNewProcess(
  tier: "process" | "bubblewrap",
  cwd: string,
  command: string,
  options: { asNobody?: boolean; env?: Record<string, string> } = {},
): Promise<CommandOutcome> {
  if (options.asNobody === true && process.getuid?.() !== 0) {
    throw new Error("Switching to nobody needs root: run these tests as root, as CI does.");
  }
  const script = fileURLToPath(new URL("../../fixtures/sandbox-command.ts", import.meta.url));
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  const node = [process.execPath, ...fixtureArgs(script), tier, cwd, command];
  const [file, ...args] =
    options.asNobody === true
      ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--", ...node]
      : node;
  const { stdout } = await execFileAsync(file as string, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, ...options.env },
  });
  return JSON.parse(stdout) as CommandOutcome;
}

/**
 * Starts one sandbox command in a new Node.js process and answers that process, to be killed
 * while the command runs (`commandInNewProcess` waits for it instead).
 */
export function startCommandInNewProcess(
  tier: "process" | "bubblewrap",
  cwd: string,
  command: string,
): ChildProcess {
  const script = fileURLToPath(new URL("../../fixtures/sandbox-command.ts", import.meta.url));
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  return spawn(process.execPath, [...fixtureArgs(script), tier, cwd, command], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd },
    stdio: "ignore",
  });
}

/** `commandInNewProcess` as `nobody`. */
export const commandAsNobody = (tier: "process" | "bubblewrap", cwd: string, command: string) =>
  commandInNewProcess(tier, cwd, command, { asNobody: true });

/** A scratch folder that belongs to `nobody`. */
export async function nobodysFolder(): Promise<{ path: string; remove: () => Promise<void> }> {
  const folder = await scratchFolder();
  await chown(folder.path, NOBODY, NOBODY);
  return folder;
}
