import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import {
  HOOK_PAYLOADS,
  HookEvent,
  HookRegistry,
  type SandboxExecData,
  type SandboxResult,
} from "../../../src/index.js";

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
