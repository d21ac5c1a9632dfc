import { z } from "zod";
import { entryById } from "../core/id-record.js";
import { lazySchema } from "../core/lazy-schema.js";
import type { Message } from "../core/values.js";
import { ModelCallInfo, StoredCheckpoint, ToolOutcome } from "./checkpoint.js";
import { conversationOf } from "./conversation.js";
import type { RunRecord } from "./schemas.js";

// A durable run's timeline as `runtime.get()` shows it, put together from its conversation and
// the entries its saves appended (see checkpoint.ts).

/** One save of the run at an effect boundary: when, the phase it was saved in, status, iteration. */
export const CheckpointRecord = lazySchema(() =>
  StoredCheckpoint.pick({
    at: true,
    phase: true,
    status: true,
    iteration: true,
  }),
);
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;

/** One provider call: its model, tokens (cache reads and writes too), duration and stop reason. */
export const ModelCallRecord = lazySchema(() =>
  ModelCallInfo.extend({
    /** When its response was saved. */
    at: z.number(),
    /** Which provider call of the run it was (1 for the first). */
    iteration: z.number().int().positive(),
  }),
);
export type ModelCallRecord = z.infer<typeof ModelCallRecord>;

/** One tool call the model asked for, with its raw and processed result. */
export const ToolCallRecord = lazySchema(() =>
  z.object({
    iteration: z.number().int().positive(),
    toolCallId: z.string().min(1),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    /** The result the model saw (after result middleware); null until it has one. */
    result: ToolOutcome.nullable(),
    /**
     * What the handler returned, before result middleware; null when no handler ran (the call
     * was denied or invalid) or its outcome is not saved yet.
     */
    raw: ToolOutcome.nullable(),
    /** When its result entered the conversation; null until then. */
    at: z.number().nullable(),
  }),
);
export type ToolCallRecord = z.infer<typeof ToolCallRecord>;

/** The timeline fields of `RunDetail`. */
export interface RunTimeline {
  checkpoints: CheckpointRecord[];
  modelCalls: ModelCallRecord[];
  toolCalls: ToolCallRecord[];
}

/** The timeline of `record`, given the checkpoints its saves stored, oldest first. */
export function runTimeline(record: RunRecord, stored: readonly StoredCheckpoint[]): RunTimeline {
  const checkpoints = stored.map(({ at, phase, status, iteration }) => ({
    at,
    phase,
    status,
    iteration,
  }));
  const modelCalls = stored.flatMap(({ at, iteration, model }) =>
    model === undefined || iteration < 1 ? [] : [{ ...model, at, iteration }],
  );
  const conversation = conversationOf(record).slice(record.input.messages.length);
  return { checkpoints, modelCalls, toolCalls: toolCalls(conversation, stored) };
}

function toolCalls(
  conversation: readonly Message[],
  stored: readonly StoredCheckpoint[],
): ToolCallRecord[] {
  const calls: ToolCallRecord[] = [];
  let iteration = 0;
  let open = new Map<string, ToolCallRecord>();
  for (const message of conversation) {
    if (message.role === "assistant") {
      iteration += 1;
      open = new Map();
      for (const block of message.content) {
        if (block.type !== "tool_use") continue;
        const call: ToolCallRecord = {
          iteration,
          toolCallId: block.id,
          name: block.name,
          input: block.input,
          result: null,
          raw: null,
          at: null,
        };
        calls.push(call);
        open.set(block.id, call);
      }
    } else if (message.role === "tool") {
      const settled = settledAt(stored, iteration);
      for (const block of message.content) {
        const call = block.type === "tool_result" ? open.get(block.toolCallId) : undefined;
        if (call === undefined || block.type !== "tool_result") continue;
        call.result = { content: block.content, isError: block.isError };
        call.at = settled?.at ?? null;
        const raw =
          settled?.raw === undefined ? undefined : entryById(settled.raw, block.toolCallId);
        call.raw = raw === undefined ? null : (raw ?? call.result);
      }
    }
  }
  return calls;
}

/** The save at which iteration `iteration`'s tool results entered the conversation. */
function settledAt(
  stored: readonly StoredCheckpoint[],
  iteration: number,
): StoredCheckpoint | undefined {
  return (
    stored.find((each) => each.iteration === iteration && each.raw !== undefined) ??
    stored.find(
      (each) =>
        each.iteration === iteration &&
        (each.phase === "compose" || each.phase === "failed" || each.phase === "cancelled"),
    )
  );
}
