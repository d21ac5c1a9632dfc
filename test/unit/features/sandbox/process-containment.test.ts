import { describe, expect, it } from "vitest";
import { containedCommand } from "../../../../src/features/sandbox/process-containment.js";

const tools = { unshare: "/usr/bin/unshare", setpriv: "/usr/bin/setpriv" };
const command = ["/usr/bin/bash", "-c", "echo hi"];

describe("containedCommand", () => {
  it("starts the program as the first process of a new PID namespace with its own /proc", () => {
    const argv = containedCommand(tools, true, command);
    const unshare = argv.slice(argv.indexOf("/usr/bin/unshare"));
    for (const flag of ["--pid", "--fork", "--kill-child", "--mount", "--mount-proc"]) {
      expect(unshare).toContain(flag);
    }
    expect(argv.slice(-4)).toEqual(["--", ...command]);
  });

  it("has unshare killed when this process dies, where setpriv is found", () => {
    expect(containedCommand(tools, true, command).slice(0, 5)).toEqual([
      "/usr/bin/setpriv",
      "--pdeathsig",
      "KILL",
      "--",
      "/usr/bin/unshare",
    ]);
    expect(containedCommand({ unshare: "/usr/bin/unshare" }, true, command)[0]).toBe(
      "/usr/bin/unshare",
    );
  });

  it("needs no user namespace as root, and keeps a non-root user's uid in one", () => {
    expect(containedCommand(tools, true, command)).not.toContain("--user");
    const unprivileged = containedCommand(tools, false, command);
    const at = unprivileged.indexOf("/usr/bin/unshare");
    expect(unprivileged.slice(at + 1, at + 3)).toEqual(["--user", "--map-current-user"]);
    expect(unprivileged).not.toContain("--map-root-user");
  });
});
