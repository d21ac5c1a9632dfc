// The process tier's containment: the program runs as the first process of a new PID namespace
// with its own /proc (util-linux's `unshare`). Two promises hang on it:
// - nothing outlives the call: when the namespace's first process ends (it exits, or it is
//   killed at the timeout or an abort), the kernel kills every other process in the namespace.
//   A `setsid` daemon leaves its process group and session, never its PID namespace. And when
//   the harnessx process itself dies, `setpriv --pdeathsig KILL` kills `unshare`, whose
//   `--kill-child` takes the namespace with it.
// - the parent's environment cannot be read: the harnessx process is not in the namespace, so
//   its /proc entry does not exist inside (the program's `$PPID` is 0). A same-user process may
//   otherwise read another's /proc/<pid>/environ, and an intermediate process with a clean
//   environment would only move the worker's pid one `PPid:` line further up.
// A non-root user needs a user namespace for this (`--user --map-current-user`: the program
// keeps its uid); root needs none.

/** Where the containment's programs are. */
export interface ContainmentTools {
  unshare: string;
  /** Without it, the program is not killed when this process dies. */
  setpriv?: string | undefined;
}

/** The whole command line that runs `command` contained. */
export function containedCommand(
  tools: ContainmentTools,
  asRoot: boolean,
  command: readonly string[],
): string[] {
  return [
    ...(tools.setpriv === undefined ? [] : [tools.setpriv, "--pdeathsig", "KILL", "--"]),
    tools.unshare,
    ...(asRoot ? [] : ["--user", "--map-current-user"]),
    "--pid",
    "--fork",
    // If `unshare` itself is killed (the timeout kills its process group), so is the program.
    "--kill-child",
    "--mount",
    "--mount-proc",
    "--",
    ...command,
  ];
}
