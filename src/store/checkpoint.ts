import { z } from "zod";
import { recordById } from "../core/id-record.js";
import { lazySchema } from "../core/lazy-schema.js";
import { StopReason, type ToolResult, Usage } from "../core/values.js";
import type { RunContext } from "../machines/run-machine.js";
import { conversationOf } from "./conversation.js";
import { liveContext } from "./live-context.js";
import { type RunRecord, RunRecordStatus } from "./schemas.js";

// What a durable run's timeline keeps of each save, appended by the save itself (one small
// entry, never rewritten): where the run stood, the provider call the save follows, and the
// handlers' raw outcomes that entered the conversation. Everything else the timeline shows
// (the calls, their processed results, the decisions) is already in the record and audit trail.

/** A tool handler's outcome, without the call id its map is keyed by. */
export const ToolOutcome = lazySchema(() =>
  z.object({ content: z.string(), isError: z.boolean() }),
);
export type ToolOutcome = z.infer<typeof ToolOutcome>;

/** One provider call of a run: its model, tokens (cache reads and writes too) and duration. */
export const ModelCallInfo = lazySchema(() =>
  z.object({
    model: z.string(),
    usage: Usage,
    durationMs: z.number().nonnegative(),
    stopReason: StopReason,
  }),
);
export type ModelCallInfo = z.infer<typeof ModelCallInfo>;

/** One save of a durable run at an effect boundary, as its timeline stores it. */
export const StoredCheckpoint = lazySchema(() =>
  z.object({
    /** When it was saved (the record's `updatedAt`). */
    at: z.number(),
    /** The phase the run was saved in. */
    phase: z.string(),
    status: RunRecordStatus,
    /** Provider calls started so far. */
    iteration: z.number().int().nonnegative(),
    /** The provider call this save follows (a save entering `afterLlm`). */
    model: ModelCallInfo.optional(),
    /**
     * The raw outcomes (before result middleware) of the handlers that ran for the calls whose
     * results entered the conversation at this save, by call id: null when the processed result
     * the model saw is the same (so the common case costs a few bytes).
     */
    raw: z.record(z.string(), ToolOutcome.nullable()).optional(),
  }),
);
export type StoredCheckpoint = z.infer<typeof StoredCheckpoint>;

/** What a checkpoint reads of the machine context of the save it describes. */
const SavedContext = lazySchema(() =>
  z.looseObject({
    iteration: z.number().int().nonnegative(),
    responseMs: z.number().optional(),
    response: z
      .looseObject({ model: z.string(), usage: Usage, stopReason: StopReason })
      .nullable()
      .optional(),
  }),
);

// Only read: the context's keys may be in any order.
const parseSavedContext = (value: unknown) => SavedContext.safeParse(value);

/** A context this process's machine made, as `parseSavedContext` gives one (no parse needed). */
const liveSaved = (context: RunContext) => ({ success: true as const, data: context });

/**
 * The timeline entry of a save of `record`. `storedMessages`: how many of its messages were
 * stored before this save; `raw`: the handlers' raw outcomes that this save's step handed to
 * the machine (their processed results are in the messages this save adds).
 */
export function checkpointOf(
  record: RunRecord,
  storedMessages: number,
  raw?: Readonly<Record<string, ToolResult>>,
): StoredCheckpoint {
  const live = liveContext(record.snapshot?.context);
  const context =
    live === undefined ? parseSavedContext(record.snapshot?.context) : liveSaved(live);
  const checkpoint: StoredCheckpoint = {
    at: record.updatedAt,
    phase: record.phase,
    status: record.status,
    iteration: context.success ? context.data.iteration : 0,
  };
  const response = context.success ? context.data.response : undefined;
  if (record.phase === "afterLlm" && response != null) {
    checkpoint.model = {
      model: response.model,
      usage: response.usage,
      durationMs: context.data?.responseMs ?? 0,
      stopReason: response.stopReason,
    };
  }
  if (raw !== undefined && Object.keys(raw).length > 0) {
    checkpoint.raw = rawOutcomes(raw, processedResults(record, storedMessages));
  }
  return checkpoint;
}

/** The tool results that the messages added since `storedMessages` carry, by call id. */
function processedResults(record: RunRecord, storedMessages: number): Map<string, ToolOutcome> {
  const added = conversationOf(record).slice(storedMessages);
  const results = new Map<string, ToolOutcome>();
  for (const message of added) {
    for (const block of message.content) {
      if (block.type === "tool_result") {
        results.set(block.toolCallId, { content: block.content, isError: block.isError });
      }
    }
  }
  return results;
}

function rawOutcomes(
  raw: Readonly<Record<string, ToolResult>>,
  processed: ReadonlyMap<string, ToolOutcome>,
): Record<string, ToolOutcome | null> {
  return recordById(
    Object.entries(raw).map(([id, result]) => {
      const seen = processed.get(id);
      const same = seen?.content === result.content && seen.isError === result.isError;
      return [id, same ? null : { content: result.content, isError: result.isError }] as const;
    }),
  );
}
