import { isDeepStrictEqual } from "node:util";
import { defaultDecisionReason } from "../../core/values.js";
import { corrupt } from "./codec.js";
import { isPlainObject } from "./document.js";

// Version 5 (see document.ts): a call state whose call is exactly a tool_use block of the
// conversation's last message (the assistant's turn the calls come from) keeps the block's
// index (`m`) in place of its call, and leaves out its status and reason when they are the
// usual ones (`USUAL_STATUS`, `USUAL_REASON`).

/** The status a referenced call's state leaves out. */
export const USUAL_STATUS = "allowed";
/** The reason a referenced call's state leaves out: the permission policy's default allow. */
export const USUAL_REASON = defaultDecisionReason("allow");

/** A message's tool_use blocks by call id (the first of an id), with their index. */
export type ToolUses = ReadonlyMap<string, { at: number; block: Record<string, unknown> }>;

const NO_USES: ToolUses = new Map();

/** The tool_use blocks of `message` when it is an assistant's, by id. */
export function toolUsesOf(message: unknown): ToolUses {
  if (!isPlainObject(message) || message.role !== "assistant") return NO_USES;
  const { content } = message;
  if (!Array.isArray(content)) return NO_USES;
  const uses = new Map<string, { at: number; block: Record<string, unknown> }>();
  for (const [at, block] of content.entries()) {
    if (isPlainObject(block) && block.type === "tool_use" && typeof block.id === "string") {
      if (!uses.has(block.id)) uses.set(block.id, { at, block });
    }
  }
  return uses;
}

/**
 * The index of the block in `uses` that `call` is exactly ({id, name, input} and nothing
 * else, as `isDeepStrictEqual` says), or -1.
 */
export function referenceOf(call: unknown, uses: ToolUses): number {
  if (uses.size === 0 || !isPlainObject(call) || typeof call.id !== "string") return -1;
  const use = uses.get(call.id);
  if (use === undefined) return -1;
  const { block } = use;
  let keys = 0;
  for (const key in call) {
    if (!Object.hasOwn(call, key) || (key !== "id" && key !== "name" && key !== "input")) {
      return -1;
    }
    keys += 1;
  }
  if (keys !== 3 || call.name !== block.name) return -1;
  return call.input === block.input || isDeepStrictEqual(call.input, block.input) ? use.at : -1;
}

/**
 * A referenced call's state (`{ m, status?, reason?, … }`) with its call taken from block `m`
 * of `message` (the conversation's last), its status and reason filled in; a `record_corrupt`
 * BackendError when `message` holds no tool_use block at `m`.
 */
export function restoreReference(
  state: Record<string, unknown>,
  message: unknown,
): Record<string, unknown> {
  const { m: at, status = USUAL_STATUS, reason = USUAL_REASON, ...rest } = state;
  const content = isPlainObject(message) && message.role === "assistant" ? message.content : [];
  const block: unknown =
    Array.isArray(content) && typeof at === "number" && Number.isSafeInteger(at) && at >= 0
      ? content[at]
      : undefined;
  if (!isPlainObject(block) || block.type !== "tool_use") {
    throw corrupt(
      "A stored run record",
      "a call refers to a tool_use block its conversation's last message does not hold",
    );
  }
  return { call: { id: block.id, name: block.name, input: block.input }, status, reason, ...rest };
}

/** True for a stored call state kept by reference (`restoreReference` reads it). */
export const isReference = (state: unknown): state is Record<string, unknown> =>
  isPlainObject(state) && state.m !== undefined && state.call === undefined;
