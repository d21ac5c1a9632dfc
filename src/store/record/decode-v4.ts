import type { PendingApproval } from "../../core/values.js";
import { idleStageContext } from "../../machines/run-machine.js";
import { isReference, restoreReference } from "./call-refs.js";
import { corrupt } from "./codec.js";
import { SNAPSHOT_DEFAULTS } from "./document.js";

// Version 4: the values loading can fill in again are left out of the document (see
// document.ts); this restores them, on top of what version 3 restores.

/** `compactHash` undone. */
function restoreHash(state: Record<string, unknown>): Record<string, unknown> {
  const { ih, ...rest } = state;
  if (typeof ih !== "string") return state;
  return { ...rest, inputHash: Buffer.from(ih, "base64url").toString("hex") };
}

/**
 * A version-4 (or later) document's call states, as `compactContext` stored them, restored.
 * `lastMessage`: the conversation's last message, for a version (5) whose states may refer to
 * its blocks (call-refs.ts); undefined for one whose never do.
 */
export function restoreCalls(
  calls: readonly unknown[],
  pending: readonly PendingApproval[],
  lastMessage?: () => unknown,
): unknown[] {
  return calls.map((stored) => {
    const state =
      typeof stored === "object" && stored !== null
        ? restoreHash(stored as Record<string, unknown>)
        : (stored as Record<string, unknown> | null | undefined);
    if (lastMessage !== undefined && isReference(state)) {
      return restoreReference(state, lastMessage());
    }
    if (typeof state?.pending !== "number") return state;
    const { pending: at, ...rest } = state;
    const entry = pending[at as number];
    if (entry === undefined) {
      throw corrupt(
        "A stored run record",
        "a parked call refers to a pending call its summary does not hold",
      );
    }
    const { toolCallId, name, input: callInput, reason } = entry;
    return {
      call: { id: toolCallId, name, input: callInput },
      status: "asked",
      ...rest,
      reason,
    };
  });
}

/**
 * What `compactInput` and `compactSnapshot` left out, filled in again (version 4 or later).
 * `messageAt`: the conversation's message at an index, for a version-5 document (its calls
 * may refer to the last one's blocks).
 */
export function restoreDocument(
  stored: Record<string, unknown>,
  pending: readonly PendingApproval[],
  messageAt?: (index: number) => unknown,
) {
  const input = stored.input as { text?: unknown; maxIterations?: unknown } | undefined;
  const snapshot = stored.snapshot as Record<string, unknown> | null | undefined;
  if (snapshot == null) return stored;
  const context = (snapshot.context ?? {}) as Record<string, unknown>;
  const count = context.messages;
  const last =
    messageAt === undefined
      ? undefined
      : () => (typeof count === "number" ? messageAt(count - 1) : undefined);
  const calls = Array.isArray(context.calls)
    ? restoreCalls(context.calls, pending, last)
    : undefined;
  return {
    ...stored,
    snapshot: {
      ...SNAPSHOT_DEFAULTS,
      ...snapshot,
      context: {
        ...idleStageContext(),
        maxIterations: input?.maxIterations,
        ...context,
        ...(calls === undefined ? {} : { calls }),
      },
    },
  };
}
