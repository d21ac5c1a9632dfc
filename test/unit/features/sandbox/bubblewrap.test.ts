import { describe, expect, it } from "vitest";
import {
  bubblewrapArgs,
  type SystemEntry,
  supportsDisableUserns,
} from "../../../../src/features/sandbox/bubblewrap.js";
import { sandboxEnvironment } from "../../../../src/features/sandbox/environment.js";

const mergedUsr: SystemEntry[] = [
  { path: "/usr", folder: true },
  { path: "/bin", symlinkTo: "usr/bin" },
  { path: "/lib", symlinkTo: "usr/lib" },
];

/** The value following each occurrence of `flag`. */
const valuesOf = (args: readonly string[], flag: string, count = 1) =>
  args.flatMap((arg, index) => (arg === flag ? [args.slice(index + 1, index + 1 + count)] : []));

describe("bubblewrapArgs", () => {
  const args = bubblewrapArgs(
    {
      system: mergedUsr,
      cwd: "/srv/work",
      readOnlyExtras: ["/usr/bin/node", "/opt/node/bin/node"],
      disableUserns: true,
    },
    ["/usr/bin/bash", "-c", "echo hi"],
  );

  it("runs the program as nobody in a user namespace of its own, with every capability dropped", () => {
    expect(args).toContain("--unshare-user");
    expect(valuesOf(args, "--uid")).toEqual([["65534"]]);
    expect(valuesOf(args, "--gid")).toEqual([["65534"]]);
    expect(valuesOf(args, "--cap-drop")).toEqual([["ALL"]]);
    expect(args).toContain("--disable-userns");
    expect(args).not.toContain("--cap-add");
  });

  it("leaves --disable-userns out for a bwrap older than 0.8", () => {
    const older = bubblewrapArgs(
      { system: mergedUsr, cwd: "/srv/work", readOnlyExtras: [], disableUserns: false },
      ["/usr/bin/true"],
    );
    expect(older).not.toContain("--disable-userns");
    expect(older).toContain("--unshare-user");
  });

  it("isolates network and PIDs, detaches the session and dies with its parent", () => {
    for (const flag of [
      "--unshare-net",
      "--unshare-pid",
      "--as-pid-1",
      "--new-session",
      "--die-with-parent",
    ]) {
      expect(args).toContain(flag);
    }
    expect(args).not.toContain("--share-net");
  });

  it("shows system folders read-only and keeps their symlinks", () => {
    expect(valuesOf(args, "--ro-bind", 2)).toContainEqual(["/usr", "/usr"]);
    expect(valuesOf(args, "--symlink", 2)).toEqual([
      ["usr/bin", "/bin"],
      ["usr/lib", "/lib"],
    ]);
    expect(valuesOf(args, "--bind", 2)).toEqual([["/srv/work", "/srv/work"]]);
  });

  it("binds a Node.js outside the system folders read-only, after the private /tmp", () => {
    const readOnly = valuesOf(args, "--ro-bind", 2);
    expect(readOnly).toContainEqual(["/opt/node/bin/node", "/opt/node/bin/node"]);
    expect(readOnly).not.toContainEqual(["/usr/bin/node", "/usr/bin/node"]);
    expect(args.indexOf("/opt/node/bin/node")).toBeGreaterThan(args.indexOf("--tmpfs"));
  });

  it("mounts the work folder last, starts there, and ends with the command", () => {
    expect(args.indexOf("--bind")).toBeGreaterThan(args.indexOf("--tmpfs"));
    expect(valuesOf(args, "--chdir")).toEqual([["/srv/work"]]);
    expect(args.slice(-4)).toEqual(["--", "/usr/bin/bash", "-c", "echo hi"]);
  });
});

describe("supportsDisableUserns", () => {
  it("is true from bubblewrap 0.8.0 on", () => {
    expect(supportsDisableUserns("bubblewrap 0.8.0\n")).toBe(true);
    expect(supportsDisableUserns("bubblewrap 0.11.1")).toBe(true);
    expect(supportsDisableUserns("bubblewrap 1.0.0")).toBe(true);
    expect(supportsDisableUserns("bubblewrap 0.7.9")).toBe(false);
    expect(supportsDisableUserns("bubblewrap 0.6.1")).toBe(false);
    expect(supportsDisableUserns("something else")).toBe(false);
  });
});

describe("sandboxEnvironment", () => {
  it("is minimal defaults then the configured variables, nothing of this process", () => {
    expect(sandboxEnvironment("/srv/work", { API_KEY: "given", LANG: "de_DE.UTF-8" })).toEqual({
      PATH: "/usr/local/bin:/usr/bin:/bin",
      HOME: "/srv/work",
      LANG: "de_DE.UTF-8",
      API_KEY: "given",
    });
  });
});
