// The process tier's containment: the program runs as the first process of a new PID namespace
// with its own /proc (util-linux's `unshare`). Two promises hang on it:
// - nothing outlives the call: when the namespace's first process ends (it exits, or it is
//   killed at the timeout or an abort), the kernel kills every other process in the namespace.
//   A `setsid` daemon leaves its process group and session, never its PID namespace.
// - the parent's environment cannot be read: the harnessx process is not in the namespace, so
//   its /proc entry does not exist inside (the program's `$PPID` is 0). A same-user process may
//   otherwise read another's /proc/<pid>/environ, and an intermediate process with a clean
//   environment would only move the worker's pid one `PPid:` line further up.
// A non-root user needs a user namespace for this (`--user --map-current-user`: the program
// keeps its uid); root needs none.

/** The `unshare` arguments that start a program contained; the command follows them. */
export function containmentArgs(asRoot: boolean): string[] {
  return [
    ...(asRoot ? [] : ["--user", "--map-current-user"]),
    "--pid",
    "--fork",
    // If `unshare` itself is killed (the timeout kills its process group), so is the program.
    "--kill-child",
    "--mount",
    "--mount-proc",
    "--",
  ];
}
