import { describe, expect, it } from "vitest";
import { containmentArgs } from "../../../../src/features/sandbox/process-containment.js";

describe("containmentArgs", () => {
  it("starts the program as the first process of a new PID namespace with its own /proc", () => {
    const args = containmentArgs(true);
    for (const flag of ["--pid", "--fork", "--kill-child", "--mount", "--mount-proc"]) {
      expect(args).toContain(flag);
    }
    // The command follows.
    expect(args.at(-1)).toBe("--");
  });

  it("needs no user namespace as root, and keeps a non-root user's uid in one", () => {
    expect(containmentArgs(true)).not.toContain("--user");
    const unprivileged = containmentArgs(false);
    expect(unprivileged.slice(0, 2)).toEqual(["--user", "--map-current-user"]);
    expect(unprivileged).not.toContain("--map-root-user");
  });
});
