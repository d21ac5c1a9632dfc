import { z } from "zod";
import { messageOf } from "../core/errors.js";
import { lazySchema } from "../core/lazy-schema.js";
import type { CallState } from "../machines/call-state.js";
import { describeIssues } from "../tools/validate.js";
import { assertReadableVersion, corrupt } from "./record/codec.js";
import { completeDocument, joinCurrent, type MessageAt, parseDocument } from "./record/decode.js";
import { isPlainObject } from "./record/document.js";
import { typedCallState } from "./record/typed-decode.js";
import { CallStateView, isRunRecordStatus, RunRecord, type RunRecordStatus } from "./schemas.js";
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
 * The stored conversation's last message (its JSON) and its index: all a tool job reads of the
 * conversation, for the calls a document keeps by reference to that message's blocks.
 */
export interface LastMessage {
  at: number;
  json: string;
}

/**
 * The tool job's view of a stored run (`document`, with the `summary` stored beside it, and
 * the stored conversation's `last` message) for call `toolCallId`. A document of another
 * `schemaVersion` is refused with `StoreVersionError`, one whose read parts do not parse (or
 * whose calls refer to a message other than `last`) with a `record_corrupt` BackendError, as
 * `joinRecord` refuses them.
 */
export function toolCallRun(
  document: string,
  summary: RunSummary | undefined,
  toolCallId: string,
  last?: LastMessage,
): ToolCallRun {
  const shape = recentShape(document, summary, last);
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
const recent = new Map<string, { summary: string; last: string; shape: Shape }>();
const RECENT_DOCUMENTS = 64;
const RECENT_MAX_CHARS = 256 * 1024;

function recentShape(
  document: string,
  summary: RunSummary | undefined,
  last: LastMessage | undefined,
): Shape {
  const summaryKey = summary === undefined ? "" : JSON.stringify(summary);
  const lastKey = last === undefined ? "" : `${last.at}:${last.json}`;
  const cached = recent.get(document);
  if (cached !== undefined && cached.summary === summaryKey && cached.last === lastKey) {
    return cached.shape;
  }
  const shape = shapeOf(document, summary, last);
  if (document.length + lastKey.length > RECENT_MAX_CHARS) return shape;
  recent.delete(document);
  recent.set(document, { summary: summaryKey, last: lastKey, shape });
  if (recent.size > RECENT_DOCUMENTS) recent.delete(recent.keys().next().value as string);
  return shape;
}

function shapeOf(
  document: string,
  summary: RunSummary | undefined,
  last: LastMessage | undefined,
): Shape {
  const parsed = parseDocument(document);
  assertReadableVersion(parsed);
  const messageAt = lastMessageAt(last);
  return typedShape(parsed, summary, messageAt) ?? parsedShape(parsed, summary, messageAt);
}

/** `last` as the conversation a document's calls may refer to: that one message, parsed once. */
export function lastMessageAt(last: LastMessage | undefined): MessageAt {
  if (last === undefined) return () => undefined;
  let message: unknown;
  let parsed = false;
  return (index) => {
    if (index !== last.at) return undefined;
    if (!parsed) {
      try {
        message = JSON.parse(last.json);
      } catch (error) {
        throw corrupt("A stored run record", `not valid JSON (${messageOf(error)})`);
      }
      parsed = true;
    }
    return message;
  };
}

/**
 * The shape of a document of the current version as `recordDocument` writes it, read as
 * `joinCurrent` reads it for a step and checked by hand (`typed-decode.ts`); undefined for any
 * other, or any part it is not sure of (`parsedShape` reads that one). Both exported for the
 * test that holds them to the same answers.
 */
export function typedShape(
  parsed: Record<string, unknown>,
  summary: RunSummary | undefined,
  messageAt?: MessageAt,
) {
  const record = joinCurrent(parsed, [], summary, false, messageAt);
  if (record === undefined) return undefined;
  const { runId, sessionId, agent, status, phase, trace, priority, snapshot } = record;
  if (!isName(runId) || !isName(sessionId) || !isName(agent) || typeof phase !== "string") {
    return undefined;
  }
  if (typeof status !== "string" || !isRunRecordStatus(status)) return undefined;
  if (!(priority === undefined || (Number.isSafeInteger(priority) && (priority as number) > 0))) {
    return undefined;
  }
  if (!(trace === undefined || isStringRecord(trace))) return undefined;
  const shape: Shape = { runId, sessionId, agent, status, phase, snapshot: null };
  if (trace !== undefined) shape.trace = trace;
  if (priority !== undefined) shape.priority = priority as number;
  if (snapshot === null) return shape;
  const context = (snapshot as { context: Record<string, unknown> }).context;
  const { iteration, calls } = context;
  if (typeof context.runId !== "string" || typeof context.sessionId !== "string") return undefined;
  if (!(typeof iteration === "number" && Number.isSafeInteger(iteration) && iteration >= 0)) {
    return undefined;
  }
  if (!(context.agent === undefined || isName(context.agent)) || !Array.isArray(calls)) {
    return undefined;
  }
  const states: CallState[] = [];
  for (const call of calls) {
    const state = typedCallState(call);
    if (state === undefined) return undefined;
    states.push(state);
  }
  shape.snapshot = {
    context: {
      runId: context.runId,
      sessionId: context.sessionId,
      iteration,
      calls: states,
      ...(context.agent === undefined ? {} : { agent: context.agent }),
    },
  };
  return shape;
}

const isName = (value: unknown): value is string => typeof value === "string" && value.length > 0;

/** A plain object of strings (`trace`), with no `__proto__` of its own. */
const isStringRecord = (value: unknown): value is Record<string, string> =>
  isPlainObject(value) &&
  !Object.hasOwn(value, "__proto__") &&
  Object.values(value).every((item) => typeof item === "string");

/** Any readable document's shape: completed by its version's decoder, then parsed by zod. */
export function parsedShape(
  parsed: Record<string, unknown>,
  summary: RunSummary | undefined,
  messageAt?: MessageAt,
): Shape {
  const { stored, sharedIds } = completeDocument(parsed, summary, messageAt);
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
