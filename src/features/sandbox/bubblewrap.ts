import { lstatSync, readlinkSync } from "../../core/node-builtins.js";

// The host's system folders, visible read-only inside the sandbox at the same paths.
const SYSTEM_FOLDERS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
// The pieces of /etc programs need without a network: the dynamic linker, users, Debian's
// alternatives (/usr/bin/awk points into /etc/alternatives), the time zone.
const ETC_PIECES = [
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/localtime",
];

/** How the host lays out one system folder: a real folder, or a symlink (merged /usr). */
export type SystemEntry = { path: string; symlinkTo: string } | { path: string; folder: true };

/** Reads how the host lays out its system folders (absent ones are left out). */
export function readSystemLayout(): SystemEntry[] {
  const entries: SystemEntry[] = [];
  for (const path of SYSTEM_FOLDERS) {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) entries.push({ path, symlinkTo: readlinkSync(path) });
      else if (stat.isDirectory()) entries.push({ path, folder: true });
    } catch {
      // Not on this host.
    }
  }
  return entries;
}

// The user and group a sandboxed program runs as inside its user namespace: not root, whoever
// harnessx runs as, so it holds no capability there and a setuid-root program gains nothing.
const SANDBOX_ID = "65534";

/** The first bwrap release with `--disable-userns`. */
const DISABLE_USERNS_SINCE = [0, 8, 0] as const;

/** True when a `bwrap --version` output ("bubblewrap 0.8.0") names a release with `--disable-userns`. */
export function supportsDisableUserns(versionOutput: string): boolean {
  const match = /(\d+)\.(\d+)\.(\d+)/.exec(versionOutput);
  if (match === null) return false;
  const version = match.slice(1, 4).map(Number);
  for (const [index, least] of DISABLE_USERNS_SINCE.entries()) {
    const part = version[index] as number;
    if (part !== least) return part > least;
  }
  return true;
}

export interface BubblewrapLayout {
  system: readonly SystemEntry[];
  /** The writable work folder, at the same path inside. */
  cwd: string;
  /** Files outside the system folders to show read-only (the node binary, say). */
  readOnlyExtras: readonly string[];
  /** Forbid the program to make user namespaces of its own (bwrap 0.8 and later). */
  disableUserns: boolean;
}

/**
 * The `bwrap` arguments for one program: its own user namespace where it is `nobody` with no
 * capability (so a harnessx running as root lends it none: no remount, no new privileges), no
 * network, a new PID namespace, read-only system folders, a private /tmp, the work folder
 * writable, the session detached from any terminal, and everything killed when bwrap dies.
 */
export function bubblewrapArgs(layout: BubblewrapLayout, command: readonly string[]): string[] {
  const args = [
    "--unshare-user",
    "--uid",
    SANDBOX_ID,
    "--gid",
    SANDBOX_ID,
    ...(layout.disableUserns ? ["--disable-userns"] : []),
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--unshare-net",
    "--unshare-pid",
    // The program itself is the namespace's first process, with no bwrap init in between: when
    // it ends, bwrap is told only once the kernel has killed and reaped everything else in the
    // namespace (with an init, bwrap returns first, and a daemon outlives the call by a moment).
    "--as-pid-1",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
  ];
  for (const entry of layout.system) {
    if ("symlinkTo" in entry) args.push("--symlink", entry.symlinkTo, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  for (const piece of ETC_PIECES) args.push("--ro-bind-try", piece, piece);
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  for (const extra of layout.readOnlyExtras) {
    if (!isUnderSystem(extra, layout.system)) args.push("--ro-bind", extra, extra);
  }
  args.push("--bind", layout.cwd, layout.cwd, "--chdir", layout.cwd, "--", ...command);
  return args;
}

function isUnderSystem(path: string, system: readonly SystemEntry[]): boolean {
  return system.some((entry) => path.startsWith(`${entry.path}/`));
}
