import { AsyncLocalStorage } from "../core/node-builtins.js";
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

// Frames are entered once this process has an agent tool, the only reader of a frame: on
// Node 20 an AsyncLocalStorage in use costs every promise of the process a hook call, and a
// direct run makes dozens a step. (An agent tool first made inside a running tool handler
// finds no frame of that run: its child runs as a top run of the parent's depth + 1.)
let framesRead = false;

/** Called by `agentAsTool`: from now on runs enter their frames. */
export const readRunFrames = (): void => {
  framesRead = true;
};

/** Runs `work` with `frame` as the current run's frame. */
export const withinRunFrame = <T>(frame: RunFrame, work: () => T): T =>
  framesRead ? frames.run(frame, work) : work();
