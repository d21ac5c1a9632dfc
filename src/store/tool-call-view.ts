import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import type { CallState } from "../machines/call-state.js";
import { describeIssues } from "../tools/validate.js";
import { assertReadableVersion, corrupt } from "./record/codec.js";
import { completeDocument, parseDocument } from "./record/decode.js";
import { CallStateView, RunRecord, type RunRecordStatus } from "./schemas.js";
import type { RunSummary } from "./summary.js";

/**
 * What a tool job reads of its run (`RunBackend.openToolCall`): the run's own fields, its
 * machine context's ids and iteration, and the state of the one call the job runs. Read from the
 * stored document without the conversation, and checked only in what it holds: a tool job
 * never needs the messages, and parsing them (with the whole record) cost most of its time.
 */
export interface ToolCallRun {
  runId: string;
  sessionId: string;
  agent: string;
  status: RunRecordStatus;
  phase: string;
  trace?: Record<string, string>;
  priority?: number;
  /**
   * The machine context's ids, iteration and current agent (set after a handoff); absent while
   * the run has no snapshot.
   */
  context?: { runId: string; sessionId: string; iteration: number; agent?: string };
  /** The call's state in the snapshot, when the snapshot holds a call with that id. */
  call?: CallState;
  /** The run's summary as stored beside the document (Redis), when there is one. */
  summary?: RunSummary;
}

/**
 * The parts of a stored run a tool job reads, checked as `joinRecord` and `contextView` check
 * them (every call state of the snapshot, as `contextView` did for tool jobs); the rest (the
 * input, the result, the conversation) is left to the steps that read it.
 */
const ToolCallRunShape = lazySchema(() =>
  RunRecord.pick({
    runId: true,
    sessionId: true,
    agent: true,
    status: true,
    phase: true,
    trace: true,
    priority: true,
  }).extend({
    snapshot: z
      .looseObject({
        context: z.looseObject({
          runId: z.string(),
          sessionId: z.string(),
          iteration: z.number().int().nonnegative(),
          calls: z.array(CallStateView),
          agent: z.string().min(1).optional(),
        }),
      })
      .nullable(),
  }),
);
const parseShape = (value: unknown) => ToolCallRunShape.safeParse(value);

/**
 * The tool job's view of a stored run (`document`, with the `summary` stored beside it) for
 * call `toolCallId`. A document of another `schemaVersion` is refused with
 * `StoreVersionError`, one whose read parts do not parse with a `record_corrupt` BackendError,
 * as `joinRecord` refuses them.
 */
export function toolCallRun(
  document: string,
  summary: RunSummary | undefined,
  toolCallId: string,
): ToolCallRun {
  const shape = recentShape(document, summary);
  const { snapshot: parsedSnapshot, trace, priority, ...own } = shape;
  const run: ToolCallRun = {
    ...own,
    ...(trace === undefined ? {} : { trace }),
    ...(priority === undefined ? {} : { priority }),
    ...(summary === undefined ? {} : { summary }),
  };
  if (parsedSnapshot === null) return run;
  const { context } = parsedSnapshot;
  run.context = {
    runId: context.runId,
    sessionId: context.sessionId,
    iteration: context.iteration,
    ...(context.agent === undefined ? {} : { agent: context.agent }),
  };
  const found = context.calls.find((state) => state.call.id === toolCallId);
  // Parsed: a field absent from the stored state stays absent, as `CallState` has it. A copy:
  // the parsed shape is shared by the jobs that read the same document.
  if (found !== undefined) run.call = structuredClone(found) as CallState;
  return run;
}

type Shape = z.infer<typeof ToolCallRunShape>;

/**
 * The shapes of the documents tool jobs read last: every tool job of a turn reads the same
 * document (the run is saved again only when the turn's results are in), so a turn of N calls
 * parses and checks it once, not N times (N² work for a fan-out of child runs). Keyed by the
 * document itself, with the summary it was completed with; bounded in count and in the size of
 * what it keeps, the oldest goes first.
 */
const recent = new Map<string, { summary: string; shape: Shape }>();
const RECENT_DOCUMENTS = 64;
const RECENT_MAX_CHARS = 256 * 1024;

function recentShape(document: string, summary: RunSummary | undefined): Shape {
  const summaryKey = summary === undefined ? "" : JSON.stringify(summary);
  const cached = recent.get(document);
  if (cached !== undefined && cached.summary === summaryKey) return cached.shape;
  const shape = shapeOf(document, summary);
  if (document.length > RECENT_MAX_CHARS) return shape;
  recent.delete(document);
  recent.set(document, { summary: summaryKey, shape });
  if (recent.size > RECENT_DOCUMENTS) recent.delete(recent.keys().next().value as string);
  return shape;
}

function shapeOf(document: string, summary: RunSummary | undefined): Shape {
  const parsed = parseDocument(document);
  assertReadableVersion(parsed);
  const { stored, sharedIds } = completeDocument(parsed, summary);
  const snapshot = stored.snapshot as { context?: Record<string, unknown> } | null | undefined;
  // The ids a document leaves to the record (`sharedIds`), as `joinRecord` puts them back.
  const withIds =
    sharedIds && snapshot?.context !== undefined
      ? {
          ...stored,
          snapshot: {
            ...snapshot,
            context: { runId: stored.runId, sessionId: stored.sessionId, ...snapshot.context },
          },
        }
      : stored;
  const shape = parseShape(withIds);
  const runId = typeof stored.runId === "string" ? stored.runId : "?";
  if (!shape.success) {
    throw corrupt(`The stored record of run "${runId}"`, describeIssues(shape.error.issues));
  }
  return shape.data;
}
