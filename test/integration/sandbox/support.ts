import { execFile } from "node:child_process";
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

/** True while `pid` is a live (not zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** What `test/fixtures/sandbox-command.ts` printed: the result and the uid it ran as. */
export type CommandOutcome = SandboxResult & { uid: number };

/** The uid and gid of `nobody`, the unprivileged user the tests switch to. */
export const NOBODY = 65534;

/**
 * Runs one sandbox command in a new Node.js process as `nobody` (switched to with `setpriv`,
 * which needs root: CI runs as root), with only PATH in its environment.
 */
export async function commandAsNobody(
  tier: "process" | "bubblewrap",
  cwd: string,
  command: string,
): Promise<CommandOutcome> {
  if (process.getuid?.() !== 0) {
    throw new Error("Switching to nobody needs root: run these tests as root, as CI does.");
  }
  const script = fileURLToPath(new URL("../../fixtures/sandbox-command.ts", import.meta.url));
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  const { stdout } = await execFileAsync(
    "setpriv",
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      "--clear-groups",
      "--",
      process.execPath,
      "--import",
      "tsx",
      script,
      tier,
      cwd,
      command,
    ],
    { cwd: root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd } },
  );
  return JSON.parse(stdout) as CommandOutcome;
}

/** A scratch folder that belongs to `nobody`. */
export async function nobodysFolder(): Promise<{ path: string; remove: () => Promise<void> }> {
  const folder = await scratchFolder();
  await chown(folder.path, NOBODY, NOBODY);
  return folder;
}
