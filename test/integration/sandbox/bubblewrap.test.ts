import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, statSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, SandboxUnavailableError } from "../../../src/index.js";
import {
  commandAsNobody,
  NOBODY,
  nobodysFolder,
  recordingHooks,
  scratchFolder,
} from "./support.js";

/**
 * What a program would try to become root on the host with: its capabilities, its uid, a
 * remount of the read-only /usr and a write there, and a user namespace of its own.
 */
const escapeAttempt = (marker: string) =>
  [
    "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status",
    'echo "uid=$(id -u)"',
    `mount -o remount,bind,rw /usr 2>/dev/null && touch /usr/${marker} 2>/dev/null; echo "remount=$?"`,
    'unshare -Ur true 2>/dev/null; echo "userns=$?"',
    "touch written-inside && echo wrote",
  ].join("; ");

/** The fields `escapeAttempt` printed. */
const fieldsOf = (stdout: string) =>
  Object.fromEntries(
    stdout
      .trim()
      .split("\n")
      .map((line) => line.split(/[:=]\s*/) as [string, string]),
  );

// .ci/run installs bubblewrap: a machine without bwrap fails these tests instead of skipping them.
describe("the bubblewrap tier", () => {
  let folder: { path: string; remove: () => Promise<void> };
  let server: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    folder = await scratchFolder();
    server = createServer((socket) => {
      connections += 1;
      socket.end("hello from the host\n");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    port = address.port;
  });
  afterAll(async () => {
    server.close();
    await folder.remove();
  });

  const connect = (sandbox: Sandbox) =>
    sandbox.execute(
      [
        "import socket",
        `with socket.create_connection(("127.0.0.1", ${port}), timeout=5) as s:`,
        "    print(s.recv(100).decode().strip())",
      ].join("\n"),
      { language: "python" },
    );

  it("finds bwrap on this machine", () => {
    expect(() => new Sandbox({ tier: "bubblewrap", cwd: folder.path })).not.toThrow();
  });

  it("has no network: a port listening on the host's 127.0.0.1 cannot be reached", async () => {
    // The same program reaches the port from the process tier: the test itself can tell.
    const open = await connect(new Sandbox({ tier: "process", cwd: folder.path }));
    expect(open).toMatchObject({ stdout: "hello from the host\n", exitCode: 0 });
    expect(connections).toBe(1);

    const closed = await connect(new Sandbox({ tier: "bubblewrap", cwd: folder.path }));
    expect(closed.exitCode).not.toBe(0);
    expect(closed.stderr).toMatch(/ConnectionRefusedError|Network is unreachable|OSError/);
    expect(connections).toBe(1);
  });

  it("writes inside the work folder and nowhere else on the host", async () => {
    const outside = `${folder.path}-outside`;
    await mkdir(outside, { recursive: true });
    const sandbox = new Sandbox({ tier: "bubblewrap", cwd: folder.path });
    try {
      const inside = await sandbox.executeCommand("echo inside > inside.txt && cat inside.txt");
      expect(inside).toMatchObject({ stdout: "inside\n", exitCode: 0 });
      expect(existsSync(join(folder.path, "inside.txt"))).toBe(true);

      const sibling = await sandbox.executeCommand(`echo x > ${outside}/escaped.txt`);
      expect(sibling.exitCode).not.toBe(0);
      expect(existsSync(join(outside, "escaped.txt"))).toBe(false);

      const system = await sandbox.executeCommand("touch /usr/harnessx-escaped");
      expect(system.exitCode).not.toBe(0);
      expect(system.stderr).toMatch(/Read-only file system/);
      expect(existsSync("/usr/harnessx-escaped")).toBe(false);

      // This process's home (and its secrets) is not even visible.
      const home = await sandbox.executeCommand(`ls ${process.env.HOME ?? "/root"}`);
      expect(home.exitCode).not.toBe(0);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("is a boundary when harnessx runs as root: no capability, no remount, nothing on the host", async () => {
    // CI runs as root: the break this guards against only shows there.
    expect(process.getuid?.()).toBe(0);
    const marker = `harnessx-pwned-${randomUUID()}`;
    const sandbox = new Sandbox({ tier: "bubblewrap", cwd: folder.path });
    const result = await sandbox.executeCommand(escapeAttempt(marker));
    expect(result.exitCode).toBe(0);
    expect(fieldsOf(result.stdout)).toEqual({
      CapEff: "0000000000000000",
      NoNewPrivs: "1",
      uid: String(NOBODY),
      remount: expect.not.stringMatching(/^0$/),
      userns: expect.not.stringMatching(/^0$/),
      wrote: undefined,
    });
    expect(result.stdout).toMatch(/\nwrote\n$/);
    expect(existsSync(`/usr/${marker}`)).toBe(false);
    // The work folder stays writable, and what the program wrote belongs to the host's user.
    expect(statSync(join(folder.path, "written-inside")).uid).toBe(0);
  });

  it("holds the same when harnessx runs as an unprivileged user", async () => {
    const own = await nobodysFolder();
    try {
      const marker = `harnessx-pwned-${randomUUID()}`;
      const outcome = await commandAsNobody("bubblewrap", own.path, escapeAttempt(marker));
      expect(outcome.uid).toBe(NOBODY);
      expect(outcome.exitCode).toBe(0);
      expect(fieldsOf(outcome.stdout)).toMatchObject({
        CapEff: "0000000000000000",
        NoNewPrivs: "1",
        uid: String(NOBODY),
        remount: expect.not.stringMatching(/^0$/),
        userns: expect.not.stringMatching(/^0$/),
      });
      expect(existsSync(`/usr/${marker}`)).toBe(false);
      expect(statSync(join(own.path, "written-inside")).uid).toBe(NOBODY);
    } finally {
      await own.remove();
    }
  });

  it("runs the program in its own PID namespace", async () => {
    const sandbox = new Sandbox({ tier: "bubblewrap", cwd: folder.path });
    const result = await sandbox.executeCommand("ls /proc | grep -c '^[0-9]'");
    // bwrap's init, bash and ls (grep may be counted): nothing of the host's processes.
    expect(Number(result.stdout.trim())).toBeLessThan(6);
  });

  it("is a clear error when bwrap is missing, never a silent fallback", async () => {
    const missing = join(folder.path, "no-such-bwrap");
    const build = () => new Sandbox({ tier: "bubblewrap", cwd: folder.path, bwrapPath: missing });
    expect(build).toThrow(SandboxUnavailableError);
    expect(build).toThrow(/bwrap.*no-such-bwrap.*not an executable/);
    try {
      build();
    } catch (error) {
      expect(error).toMatchObject({ code: "sandbox_unavailable", name: "SandboxUnavailableError" });
    }
  });

  it("is a clear error when bwrap cannot run here, and nothing runs", async () => {
    const recorded = recordingHooks();
    const broken = new Sandbox(
      { tier: "bubblewrap", cwd: folder.path, bwrapPath: "/bin/false" },
      { hooks: recorded.hooks },
    );
    await expect(broken.executeCommand("echo ran > ran.txt")).rejects.toThrow(
      SandboxUnavailableError,
    );
    await expect(broken.tier()).rejects.toMatchObject({ code: "sandbox_unavailable" });
    expect(existsSync(join(folder.path, "ran.txt"))).toBe(false);
    expect(recorded.events).toEqual([]);
  });

  it('"auto" picks bubblewrap where bwrap runs, and process where it does not', async () => {
    await expect(new Sandbox({ cwd: folder.path }).tier()).resolves.toBe("bubblewrap");
    const recorded = recordingHooks();
    const without = new Sandbox(
      { cwd: folder.path, bwrapPath: join(folder.path, "no-such-bwrap") },
      { hooks: recorded.hooks },
    );
    await expect(without.tier()).resolves.toBe("process");
    await without.executeCommand("true");
    expect(recorded.events.map((event) => event.tier)).toEqual(["process"]);
  });
});
