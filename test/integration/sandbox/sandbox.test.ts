import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, Sandbox, SandboxError, type SandboxTier } from "../../../src/index.js";
import { until } from "../../support/until.js";
import {
  commandInNewProcess,
  expectReported,
  liveSleeps,
  NOBODY,
  nobodysFolder,
  recordingHooks,
  scratchFolder,
  startCommandInNewProcess,
} from "./support.js";

// Both tiers keep the same limits; bubblewrap is installed by .ci/run, so its absence fails here.
describe.each<SandboxTier>(["process", "bubblewrap"])("Sandbox, %s tier", (tier) => {
  let folder: { path: string; remove: () => Promise<void> };
  const recorded = recordingHooks();
  let sandbox: Sandbox;

  beforeAll(async () => {
    folder = await scratchFolder();
    sandbox = new Sandbox(
      { tier, cwd: folder.path, timeoutMs: 15_000, env: { GREETING: "hello" } },
      { hooks: recorded.hooks },
    );
  });
  afterAll(async () => {
    await folder.remove();
  });

  /** Runs a call and checks the SANDBOX_EXEC it emitted against its result. */
  const reported = async (
    kind: "code" | "command",
    call: () => Promise<Awaited<ReturnType<Sandbox["execute"]>>>,
  ) => {
    const before = recorded.events.length;
    const result = await call();
    expect(recorded.events.length).toBe(before + 1);
    expectReported(recorded.events.at(-1), result, { kind, tier });
    return result;
  };

  it("settles on its tier", async () => {
    await expect(sandbox.tier()).resolves.toBe(tier);
  });

  it("runs javascript with this Node.js", async () => {
    const result = await reported("code", () =>
      sandbox.execute("console.log(6 * 7, process.version)", { language: "javascript" }),
    );
    expect(result).toMatchObject({ stdout: `42 ${process.version}\n`, exitCode: 0 });
    expect(result.timedOut).toBe(false);
    expect(result.executionTimeMs).toBeGreaterThan(0);
  });

  it("runs python with python3", async () => {
    const result = await reported("code", () =>
      sandbox.execute("import sys\nprint(sum(range(10)))\nsys.exit(4)", { language: "python" }),
    );
    expect(result).toMatchObject({ stdout: "45\n", stderr: "", exitCode: 4, timedOut: false });
  });

  it("runs bash code", async () => {
    const result = await reported("code", () =>
      sandbox.execute('for n in 1 2 3; do printf "%s," "$n"; done', { language: "bash" }),
    );
    expect(result).toMatchObject({ stdout: "1,2,3,", exitCode: 0 });
  });

  it("runs commands in the work folder, with stdout, stderr and the exit code apart", async () => {
    const result = await reported("command", () =>
      sandbox.executeCommand('pwd; echo "$HOME"; echo oops >&2; exit 3'),
    );
    expect(result).toMatchObject({
      stdout: `${folder.path}\n${folder.path}\n`,
      stderr: "oops\n",
      exitCode: 3,
      timedOut: false,
    });
  });

  it("reports a javascript exception as stderr and exit code 1", async () => {
    const result = await reported("code", () =>
      sandbox.execute('throw new Error("boom")', { language: "javascript" }),
    );
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("Error: boom");
  });

  it("writes files in the work folder", async () => {
    await reported("command", () => sandbox.executeCommand("echo kept > note.txt"));
    await expect(readFile(join(folder.path, "note.txt"), "utf8")).resolves.toBe("kept\n");
  });

  it("passes none of this process's variables, only minimal defaults and `env`", async () => {
    const canary = `canary-${randomUUID()}`;
    process.env.HARNESSX_SANDBOX_CANARY = canary;
    try {
      const shell = await reported("command", () => sandbox.executeCommand("env"));
      expect(shell.stdout).not.toContain(canary);
      expect(shell.stdout).toContain("GREETING=hello\n");
      const python = await reported("code", () =>
        sandbox.execute("import os, json; print(json.dumps(dict(os.environ)))", {
          language: "python",
        }),
      );
      const seen = JSON.parse(python.stdout) as Record<string, string>;
      expect(seen).toMatchObject({
        PATH: "/usr/local/bin:/usr/bin:/bin",
        HOME: folder.path,
        LANG: "C.UTF-8",
        GREETING: "hello",
      });
      // bwrap sets PWD for the program it starts; nothing else is added.
      expect(Object.keys(seen).sort()).toEqual(
        ["GREETING", "HOME", "LANG", "PATH", ...(tier === "bubblewrap" ? ["PWD"] : [])].sort(),
      );
    } finally {
      delete process.env.HARNESSX_SANDBOX_CANARY;
    }
  });

  it("kills the whole process group at the timeout: no grandchild survives", async () => {
    const short = new Sandbox(
      { tier, cwd: folder.path, timeoutMs: 2_000 },
      { hooks: recorded.hooks },
    );
    const token = `${300 + Math.floor(Math.random() * 1000)}.${Date.now() % 1000}`;
    const before = recorded.events.length;
    const result = await short.executeCommand(
      `sleep ${token} >/dev/null 2>&1 & echo "$!"; sleep ${token}`,
    );
    expectReported(recorded.events[before], result, { kind: "command", tier });
    expect(result).toMatchObject({ exitCode: null, timedOut: true });
    // The pid printed is the sleep's pid in the program's own PID namespace, in both tiers.
    expect(result.stdout).toMatch(/^\d+\n$/);
    await until(`no "sleep ${token}" left`, async () => liveSleeps(token).length === 0, {
      timeoutMs: 2_000,
    });
  });

  it("kills what a command left in the background when it exits", async () => {
    const token = `${1300 + Math.floor(Math.random() * 1000)}.${Date.now() % 1000}`;
    const result = await reported("command", () =>
      sandbox.executeCommand(`sleep ${token} >/dev/null 2>&1 & echo started`),
    );
    expect(result).toMatchObject({ stdout: "started\n", exitCode: 0, timedOut: false });
    await until(`no "sleep ${token}" left`, async () => liveSleeps(token).length === 0, {
      timeoutMs: 2_000,
    });
  });

  it("kills a setsid daemon the command started when the command exits", async () => {
    const token = `${3300 + Math.floor(Math.random() * 1000)}.${Date.now() % 1000}`;
    // Two ways out of the process group: setsid, and setsid after a double fork.
    const result = await reported("command", () =>
      sandbox.executeCommand(
        `setsid sleep ${token} </dev/null >/dev/null 2>&1 & (setsid sleep ${token} </dev/null >/dev/null 2>&1 &); echo started`,
      ),
    );
    expect(result).toMatchObject({ stdout: "started\n", exitCode: 0, timedOut: false });
    // Gone by the time the call returns, not a moment later.
    expect(liveSleeps(token)).toEqual([]);
  });

  it("kills a setsid daemon at the timeout", async () => {
    const short = new Sandbox({ tier, cwd: folder.path, timeoutMs: 1_500 });
    const token = `${4300 + Math.floor(Math.random() * 1000)}.${Date.now() % 1000}`;
    const result = await short.executeCommand(
      `setsid sleep ${token} </dev/null >/dev/null 2>&1 & echo started; sleep ${token}`,
    );
    expect(result).toMatchObject({ stdout: "started\n", exitCode: null, timedOut: true });
    await until(`no "sleep ${token}" left`, async () => liveSleeps(token).length === 0, {
      timeoutMs: 2_000,
    });
  });

  it("kills what the command started when the process running it is killed", async () => {
    const token = `${5300 + Math.floor(Math.random() * 1000)}.${Date.now() % 1000}`;
    const worker = startCommandInNewProcess(
      tier,
      folder.path,
      `setsid sleep ${token} </dev/null >/dev/null 2>&1 & sleep ${token}`,
    );
    const exited = once(worker, "exit");
    try {
      await until(`both "sleep ${token}" to start`, async () => liveSleeps(token).length === 2);
    } finally {
      worker.kill("SIGKILL");
      await exited;
    }
    await until(`no "sleep ${token}" left`, async () => liveSleeps(token).length === 0, {
      timeoutMs: 2_000,
    });
  });

  it.each([
    ["this process's user", false],
    ["nobody", true],
  ])("shows the command no environment of the process that runs it, as %s", async (_, asNobody) => {
    const canary = `canary-${randomUUID()}`;
    const own = asNobody ? await nobodysFolder() : await scratchFolder();
    try {
      // The worker's pid, its parent's and the sandboxed program's parent's environments.
      const outcome = await commandInNewProcess(
        tier,
        own.path,
        [
          'echo "ppid=$PPID"',
          "cat /proc/$PPID/environ 2>&1 | tr '\\0' '\\n'",
          "cat /proc/{worker}/environ 2>&1 | tr '\\0' '\\n'",
          "for each in /proc/[0-9]*; do cat $each/environ 2>/dev/null | tr '\\0' '\\n'; done",
        ].join("; "),
        { asNobody, env: { HARNESSX_WORKER_SECRET: canary } },
      );
      expect(outcome.uid).toBe(asNobody ? NOBODY : process.getuid?.());
      expect(outcome.stdout).toMatch(/^ppid=\d+\n/);
      // The program's own environment is there: the scan read something.
      expect(outcome.stdout).toContain(`HOME=${own.path}`);
      expect(outcome.stdout).not.toContain(canary);
      expect(outcome.stderr).not.toContain(canary);
    } finally {
      await own.remove();
    }
  });

  it("kills the program when the signal aborts", async () => {
    const controller = new AbortController();
    const token = `${2300 + Math.floor(Math.random() * 1000)}.${Date.now() % 1000}`;
    const running = sandbox.executeCommand(`echo ready; sleep ${token}`, {
      signal: controller.signal,
    });
    await until("the sleep to start", async () => liveSleeps(token).length > 0);
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ stdout: "ready\n", exitCode: null, timedOut: false });
    expect(liveSleeps(token)).toEqual([]);
  });

  it("cuts stdout and stderr at maxOutputBytes each, and marks the cut", async () => {
    const capped = new Sandbox({ tier, cwd: folder.path, maxOutputBytes: 100 });
    const result = await capped.execute(
      'process.stdout.write("a".repeat(5000)); process.stderr.write("é".repeat(60))',
      { language: "javascript" },
    );
    expect(result.stdout).toBe(`${"a".repeat(100)}\n[output truncated at 100 bytes]`);
    // 100 bytes end inside nothing: 50 two-byte characters exactly.
    expect(result.stderr).toBe(`${"é".repeat(50)}\n[output truncated at 100 bytes]`);
    const odd = new Sandbox({ tier, cwd: folder.path, maxOutputBytes: 101 });
    const split = await odd.execute('process.stdout.write("é".repeat(60))', {
      language: "javascript",
    });
    // Byte 101 would split a character: the cut steps back to a whole one.
    expect(split.stdout).toBe(`${"é".repeat(50)}\n[output truncated at 101 bytes]`);
    expect(result.exitCode).toBe(0);
  });

  it("keeps output under the cap whole", async () => {
    const capped = new Sandbox({ tier, cwd: folder.path, maxOutputBytes: 100 });
    const result = await capped.executeCommand("printf '%0100d' 0");
    expect(result.stdout).toBe("0".repeat(100));
  });

  it("refuses a work folder that does not exist, without running anything", async () => {
    const missing = new Sandbox({ tier, cwd: join(folder.path, "missing") }, recorded);
    const before = recorded.events.length;
    const failure = await missing.executeCommand("true").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SandboxError);
    expect(failure).toMatchObject({ code: "sandbox_failed" });
    expect(recorded.events.length).toBe(before);
  });

  it("refuses an unknown language with a ConfigError naming it", async () => {
    const failure = await sandbox
      .execute("puts 1", { language: "ruby" as "bash" })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as Error).message).toBe(
      'Invalid execute options: language: expected one of javascript, bash, python, got "ruby"',
    );
  });
});
