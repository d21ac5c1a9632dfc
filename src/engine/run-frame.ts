import { AsyncLocalStorage } from "node:async_hooks";
import type { Provider } from "../core/provider.js";
import type { RunEventSink } from "./run-events.js";

/**
 * Where a direct run sits in a tree of runs (`agent.asTool` runs a child inline, inside its
 * parent's tool call): read by the child's tool to name its child and to enforce `maxDepth`.
 */
export interface RunFrame {
  readonly runId: string;
  readonly sessionId: string;
  readonly rootRunId: string;
  /** 0 for a top run, its parent's depth + 1 for a child. */
  readonly depth: number;
  /** The running agent's `config.maxDepth`. */
  readonly maxDepth: number;
  /** The run's event stream (`runStream`), where its agent tools announce their child runs. */
  readonly emit?: RunEventSink | undefined;
  /** The run's provider: a replay's answers agent tools' calls from its recording. */
  readonly provider?: Provider | undefined;
}

// Async context rather than an argument: the child is started from inside a tool handler, which
// sees only the ToolContext, and the frame must follow every await of the parent's run.
const frames = new AsyncLocalStorage<RunFrame>();

/** The frame of the run whose code is executing now, if any. */
export const currentRunFrame = (): RunFrame | undefined => frames.getStore();

/** The frame of a run about to start: below the current run's, or a new root. */
export function nextRunFrame(run: {
  runId: string;
  sessionId: string;
  maxDepth: number;
  emit: RunEventSink | undefined;
  provider: Provider | undefined;
}): RunFrame {
  const outer = frames.getStore();
  return {
    ...run,
    rootRunId: outer?.rootRunId ?? run.runId,
    depth: outer === undefined ? 0 : outer.depth + 1,
  };
}

/** Runs `work` with `frame` as the current run's frame. */
export const withinRunFrame = <T>(frame: RunFrame, work: () => T): T => frames.run(frame, work);
