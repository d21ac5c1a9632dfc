import type { Message } from "../core/values.js";
import type { RunRecord } from "./schemas.js";

/** The conversation a record holds: the machine's once started, else the input's. */
export function conversationOf(record: RunRecord): readonly Message[] {
  const context = record.snapshot?.context as { messages?: Message[] } | undefined;
  return context?.messages ?? record.input.messages;
}
