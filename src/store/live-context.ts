import type { RunContext } from "../machines/run-machine.js";

// A step saves the machine context its actor holds: a value this process made, of the
// machine's own type, that the views and summaries read at every save would otherwise parse
// again (the parse is for contexts read back from a store). A context is never changed in
// place (XState replaces it), so once made here it stays what it was.
const made = new WeakSet<object>();

/** Marks `context` as one this process's run machine made. */
export function markLiveContext(context: RunContext): void {
  made.add(context);
}

/** `context` as a `RunContext` when this process's run machine made it; otherwise undefined. */
export function liveContext(context: unknown): RunContext | undefined {
  return typeof context === "object" && context !== null && made.has(context)
    ? (context as RunContext)
    : undefined;
}
